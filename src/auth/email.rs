//! Email addresses as login names: trimmed, lower-cased, and free of
//! characters that do not show, so two accounts cannot look alike.

use crate::error::FieldError;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// A login email that has been checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

/// Characters that render as nothing or as blank space: zero-width spaces and
/// joiners, bidi controls, soft hyphens, tags, controls, unassigned and
/// private-use code points, and every kind of space.
fn invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c.general_category(),
            GeneralCategory::Format
                | GeneralCategory::Control
                | GeneralCategory::Unassigned
                | GeneralCategory::PrivateUse
                | GeneralCategory::Surrogate
                | GeneralCategory::SpaceSeparator
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
}

impl Email {
    pub fn parse(raw: &str) -> Result<Email, FieldError> {
        let email = raw.trim().to_lowercase();
        if email.chars().any(invisible) {
            return Err(FieldError::new(
                "email",
                "must not contain invisible, control or space characters",
            ));
        }
        let valid = email.len() <= 254
            && email.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty()
                    && domain.contains('.')
                    && !domain.starts_with('.')
                    && !domain.contains('@')
            });
        if valid {
            Ok(Email(email))
        } else {
            Err(FieldError::new("email", "must be an email address"))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_make_an_email_invalid() {
        assert_eq!(
            Email::parse(" Ada@Example.com ").map(|e| e.0),
            Ok("ada@example.com".to_owned())
        );
        for bad in [
            "ad\u{200b}a@example.com",
            "ada\u{200d}@example.com",
            "ada@exa\u{00ad}mple.com",
            "\u{202e}ada@example.com",
            "ada@example.com\u{feff}x",
            "ad\u{3000}a@example.com",
            "ada@exam\u{e0041}ple.com",
            "ad\ta@example.com",
        ] {
            let err = Email::parse(bad).expect_err(bad);
            assert_eq!(err.field, "email");
        }
    }
}
