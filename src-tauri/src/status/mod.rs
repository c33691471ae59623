//! The engine's status (what the Overview, the header and the navigation badges show) and
//! whether the window reaches the engine at all.

pub mod commands;
