//! Run-time settings: defer mode, pause, reviews on or off; stored by the engine.

pub mod commands;
