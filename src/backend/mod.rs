//! What a backend's CLI will really use. One answer to "which API, which base URL, which
//! credential": the probe, the launch, the account check and the doctor all ask here, so
//! a check can never go to another host or with another key than the launch.

pub mod discover;
pub mod endpoint;

pub use endpoint::{Account, Api, AuthScheme, Credential, Endpoint, PlanError, resolve};
