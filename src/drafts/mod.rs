//! Skill learning (DESIGN §2.2): candidates become drafts that a person reads, edits and
//! approves.

pub mod candidates;
pub mod provenance;
pub mod records;
pub mod picker;
pub mod service;
