//! What agent knows about each CLI it runs (DESIGN §16): one adapter per CLI.

pub mod opencode;
