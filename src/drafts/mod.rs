//! Skill learning (DESIGN §2.2): candidates become drafts that a person reads, edits and
//! approves.
//!
//! - [`candidates`]: what reviews propose, with their state machine.
//! - [`picker`]: the draft worker's pick of open candidates (priority, confidence, newest; at
//!   most `max_drafts_per_run` queued), superseding those whose skill is covered.
//! - [`synthesis`] and [`evaluation`]: the requests that write and judge a draft, and the
//!   validation of their answers; [`kinds`]: those two as kinds of learning work for the one
//!   dispatcher, storing drafts with their safety report.
//! - [`records`] and [`provenance`]: the drafts and the skills Lull wrote, as stored.
//! - [`service`]: what a person does — read, dismiss a finding, edit, reject, approve, roll
//!   back.
//!
//! Invariants: nothing here publishes a skill without a person's *Approve*; safety findings
//! never reach a model; every transition emits one engine event.

pub mod candidates;
pub mod evaluation;
pub mod kinds;
pub mod picker;
pub mod provenance;
pub mod records;
pub mod service;
pub mod synthesis;
