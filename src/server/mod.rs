//! Managed llama-server awareness (being written).
