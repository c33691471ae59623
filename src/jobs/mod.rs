//! Continual-learning jobs (DESIGN §2.4): durable, budgeted training runs of a routing head from
//! the logged route outcomes, with a checkpoint per round, receipts, cancel, an explicit resume
//! and promote.
//!
//! - [`training`]: the data (examples from the outcome log, its digest, the held-out split),
//!   a round of training and the metrics; pure.
//! - [`records`]: jobs, checkpoints and receipts as stored, with the job state machine.
//! - [`runner`]: a job's low-priority thread: rounds, pause, cancel, the wall clock, commits.
//! - [`service`]: what a person does — start, list, cancel, resume, promote.

pub mod records;
pub mod runner;
pub mod service;
pub mod training;
