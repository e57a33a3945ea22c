//! The server's settings: the same configuration files as the command line (`--config`, or
//! the nearest `synclint.toml` or `pyproject.toml` with `[tool.synclint]` above each file), read
//! again whenever one of them changes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::Report;

use crate::config::{Overrides, Resolver, Source};
use crate::pipeline::cache_root;

/// How `synclint server` was started.
pub struct ServerOptions {
    /// Ignore configuration files.
    pub isolated: bool,
    /// One configuration file for every file (absolute).
    pub config: Option<PathBuf>,
    pub no_cache: bool,
    /// The cache folder (absolute); by default `.synclint_cache` in the project root.
    pub cache_dir: Option<PathBuf>,
    pub threads: usize,
}

impl ServerOptions {
    /// Settings for every folder under `root`, read afresh.
    pub fn resolver(&self, root: &Path) -> Result<Arc<Resolver>, Report> {
        let source = if self.isolated {
            Source::Isolated
        } else if let Some(config) = &self.config {
            Source::Explicit(config.clone())
        } else {
            Source::Discover
        };
        Resolver::new(source, Overrides::default(), root.to_path_buf()).map(Arc::new)
    }

    /// The cache folder of the project at `root`; `None` with `--no-cache`.
    pub fn cache(&self, resolver: &Resolver, root: &Path) -> Option<PathBuf> {
        (!self.no_cache).then(|| cache_root(self.cache_dir.as_deref(), resolver, root))
    }

    /// Whether a change to `path` may change the settings.
    pub fn is_config_file(&self, path: &Path) -> bool {
        match &self.config {
            Some(config) => path == config,
            None => path
                .file_name()
                .is_some_and(|name| name == "pyproject.toml" || name == "synclint.toml"),
        }
    }
}
