//! Stand-in llama-server (being written).
