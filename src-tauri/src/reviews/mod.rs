//! Reviews: the durable queue of conversations waiting to be learned from (DESIGN §2.1).

pub mod commands;
