//! The engine's status: what the Overview, the header and the navigation badges show.

pub mod commands;
