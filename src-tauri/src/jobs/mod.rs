//! Training jobs: runs that train a routing head from what the agent reported, which a person
//! starts, follows, cancels, resumes and promotes (DESIGN §2.4).

pub mod commands;
