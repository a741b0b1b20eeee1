//! One adapter per external program (DESIGN.md §16): what agent knows about each CLI it runs.

pub mod dialect;
