//! URLs inside string literals and template text.
//!
//! Only `scheme://` forms are taken: the well-known schemes (http, https,
//! ws, wss, file, ftp) and custom ones (`app://`, `x-app://`) that Electron
//! apps register. A bare `name:` is too common in ordinary text to mean a
//! URL, so custom schemes need the `//`.

const KNOWN: &[&str] = &["http", "https", "ws", "wss", "file", "ftp"];

/// The URLs in `text`, in order.
pub(crate) fn find_urls(text: &str) -> Vec<&str> {
    let mut urls = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let sep = from + found;
        from = sep + 3;
        let before = &text[..sep];
        let scheme_start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(sep, |(i, _)| i);
        // A scheme starts with a letter.
        let Some(scheme_start) = text[scheme_start..sep]
            .find(|c: char| c.is_ascii_alphabetic())
            .map(|i| scheme_start + i)
        else {
            continue;
        };
        let scheme = text[scheme_start..sep].to_ascii_lowercase();
        let known = KNOWN.contains(&scheme.as_str());
        if !known && scheme.len() < 2 {
            continue;
        }
        let rest = &text[sep + 3..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>'))
            .unwrap_or(rest.len());
        if end == 0 && scheme != "file" {
            continue;
        }
        urls.push(&text[scheme_start..sep + 3 + end]);
        from = sep + 3 + end;
    }
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_custom_schemes_are_found() {
        assert_eq!(
            find_urls("see https://example.com/a?b=1 and ws://h:1/x"),
            vec!["https://example.com/a?b=1", "ws://h:1/x"]
        );
        assert_eq!(find_urls("app://index.html"), vec!["app://index.html"]);
        assert_eq!(find_urls("file://"), vec!["file://"]);
        assert_eq!(find_urls("<a href=\"http://x.org\">"), vec!["http://x.org"]);
    }

    #[test]
    fn non_urls_are_ignored() {
        assert!(find_urls("http://").is_empty());
        assert!(find_urls("a://b").is_empty());
        assert!(find_urls("label: value").is_empty());
        assert!(find_urls("1://x").is_empty());
        assert!(find_urls("é://").is_empty());
    }
}
