//! About the app: the version and build facts the UI shows.

pub mod commands;
