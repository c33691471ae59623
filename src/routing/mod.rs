//! Skill routing head (being written).
