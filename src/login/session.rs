#[derive(Debug, Clone, Default, PartialEq)]
pub struct Session {
    pub id: Option<String>,
    pub model: Option<String>,
    pub first_prompt: Option<String>,
    pub last_prompt: Option<String>,
    pub last_replies: Vec<String>,
    pub files: Vec<String>,
}
