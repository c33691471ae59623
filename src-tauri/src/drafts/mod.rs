//! Drafts: proposed skills waiting for a person's *Approve* or *Reject* (DESIGN §2.2).

pub mod commands;
