//! Continual-learning jobs (DESIGN §2.4): durable training runs of a routing head from its log.

pub mod training;
