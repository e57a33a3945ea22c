//! What names refer to through imports: the qualified name a dotted chain rooted in an import
//! spells, in its canonical form (`F.cross_entropy` is `torch.nn.functional.cross_entropy`).
//! Which qualified names are libraries rather than project code is a naming convention, in
//! [`crate::semantic::names`].
//!
//! It may import the model (its parent) and its scopes, for the bindings imports make.

use ruff_python_ast::Expr;

use super::SemanticModel;
use super::scopes::BindingSource;

impl<'a> SemanticModel<'a> {
    /// The qualified name an expression refers to through imports: `F.cross_entropy` ->
    /// `torch.nn.functional.cross_entropy`. `None` for anything not rooted in an import.
    pub fn qualified_name(&self, expr: &Expr) -> Option<String> {
        let (root, length) = self.import_root(expr)?;
        let mut qualified = String::with_capacity(length);
        qualified.push_str(root);
        canonicalize(&mut qualified);
        push_attributes(expr, &mut qualified);
        Some(qualified)
    }

    /// The qualified name a bare name is imported as (`bce` from `from .losses import bce`).
    pub fn imported_name(&self, name: &str) -> Option<String> {
        let BindingSource::Import(qualified) = &self.lookup(name)?.source else {
            return None;
        };
        let mut qualified = qualified.to_string();
        canonicalize(&mut qualified);
        Some(qualified)
    }

    /// The import a `name.attr.attr` chain starts from, and the length of its qualified name.
    /// Kind inference asks this of every link of a chain, so a chain longer than any dotted
    /// name of a module's contents ([`MAX_DOTTED_LINKS`]) is answered `None` without walking
    /// it: a 100,000-link chain would otherwise cost 100,000 walks of its whole length.
    pub(super) fn import_root(&self, expr: &Expr) -> Option<(&str, usize)> {
        let mut length = 0;
        let mut link = expr;
        for _ in 0..=MAX_DOTTED_LINKS {
            match link {
                Expr::Name(name) => {
                    return match &self.lookup(name.id.as_str())?.source {
                        BindingSource::Import(qualified) => Some((qualified, length + qualified.len())),
                        _ => None,
                    };
                }
                Expr::Attribute(attribute) => {
                    length += 1 + attribute.attr.len();
                    link = &attribute.value;
                }
                _ => return None,
            }
        }
        None
    }
}

/// The most attributes a dotted name through an import is followed for
/// (`torch.nn.functional.cross_entropy` has three); longer chains name nothing the model knows.
const MAX_DOTTED_LINKS: usize = 64;

/// Appends `.attr` for each attribute of a `name.attr.attr` chain, outermost last, naming each
/// prefix canonically.
fn push_attributes(expr: &Expr, qualified: &mut String) {
    if let Expr::Attribute(attribute) = expr {
        push_attributes(&attribute.value, qualified);
        qualified.push('.');
        qualified.push_str(attribute.attr.as_str());
        canonicalize(qualified);
    }
}

/// `torch.nn.modules.loss.CrossEntropyLoss` and `torch.nn.CrossEntropyLoss` are the same.
fn canonicalize(qualified: &mut String) {
    const ALIASES: &[(&str, &str)] = &[
        ("torch.nn.modules.loss.", "torch.nn."),
        ("torch.nn.modules.", "torch.nn."),
        ("torch.functional.", "torch."),
        ("torch.utils.data.dataloader.", "torch.utils.data."),
        ("torch.cuda.amp.grad_scaler.", "torch.cuda.amp."),
        ("torch.amp.grad_scaler.", "torch.amp."),
        ("torch.distributions.normal.", "torch.distributions."),
        ("torch.distributions.categorical.", "torch.distributions."),
    ];
    if !qualified.starts_with("torch.") {
        return;
    }
    for (from, to) in ALIASES {
        if let Some(rest) = qualified.strip_prefix(from)
            && !rest.contains('.')
        {
            qualified.replace_range(..from.len(), to);
            return;
        }
    }
}
