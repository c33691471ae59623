//! Lull engine (being written).
pub mod routing;
pub mod server;
