//! Text as XML 1.0 holds it, for the JUnit report and `synclint trace --svg`.

use std::borrow::Cow;

/// `text` as XML character data or an attribute value. Tabs and line breaks become character
/// references, because a parser turns them into spaces in an attribute; the other control
/// characters cannot appear in XML 1.0 at all, even as references, so they become U+FFFD.
pub fn escape(text: &str) -> Cow<'_, str> {
    let special = |c: char| matches!(c, '&' | '<' | '>' | '"' | '\'' | '\t' | '\n' | '\r') || !is_xml_char(c);
    if !text.contains(special) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\t' => escaped.push_str("&#9;"),
            '\n' => escaped.push_str("&#10;"),
            '\r' => escaped.push_str("&#13;"),
            c if is_xml_char(c) => escaped.push(c),
            _ => escaped.push(char::REPLACEMENT_CHARACTER),
        }
    }
    Cow::Owned(escaped)
}

/// XML 1.0's `Char`: what a document may hold. Rust's `char` already excludes surrogates.
fn is_xml_char(c: char) -> bool {
    !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    /// Whatever a message or path holds, the XML parses and gives it back (U+FFFD for what
    /// XML cannot hold), as an attribute and as text.
    #[test]
    fn escaped_text_parses_back() {
        let text = "a & b < c > d \"e\" 'f'\tg\nh\ri \u{1}j\u{1f}k\u{fffe} \u{85}é🙂";
        let document = format!(r#"<a b="{0}">{0}</a>"#, escape(text));
        let parsed = roxmltree::Document::parse(&document).unwrap_or_else(|e| panic!("{e}: {document}"));
        let expected = "a & b < c > d \"e\" 'f'\tg\nh\ri \u{fffd}j\u{fffd}k\u{fffd} \u{85}é🙂";
        assert_eq!(parsed.root_element().attribute("b"), Some(expected));
        assert_eq!(parsed.root_element().text(), Some(expected));
        assert!(matches!(escape("plain"), std::borrow::Cow::Borrowed("plain")));
    }
}
