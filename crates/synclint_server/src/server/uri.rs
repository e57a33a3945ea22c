//! Document URIs and the file paths they name. Only `file:` URIs name files; a buffer an editor
//! has not saved yet (`untitled:`) is linted on its own.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::Uri;

/// The file a `file:` URI names; `None` for any other URI.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let url = url::Url::parse(uri.as_str()).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    url.to_file_path().ok()
}

/// The `file:` URI of an absolute path.
pub fn from_path(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_round_trip_with_escapes() {
        let uri = Uri::from_str("file:///tmp/my%20project/caf%C3%A9.py").unwrap();
        let path = to_path(&uri).unwrap();
        assert_eq!(path, PathBuf::from("/tmp/my project/café.py"));
        assert_eq!(from_path(&path).unwrap(), uri);
    }

    #[test]
    fn other_schemes_name_no_file() {
        assert_eq!(to_path(&Uri::from_str("untitled:Untitled-1").unwrap()), None);
        assert_eq!(to_path(&Uri::from_str("https://example.com/a.py").unwrap()), None);
    }
}
