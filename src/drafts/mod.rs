//! Skill drafts (DESIGN §2.2): a candidate's SKILL.md synthesized, checked and evaluated.

pub mod evaluation;
pub mod synthesis;
