#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLimit {
    Ask,
    Continue,
    Resume,
    Stop,
}
impl super::Config {
    pub fn on_limit_for(&self, _b: &super::Backend) -> Option<OnLimit> {
        None
    }
}
