//! How deep a syntax tree nests, measured without recursion, and taking a tree of any depth
//! apart without recursion.
//!
//! The parser grows its stack on demand, so it returns a tree however deep the source nests
//! (`a+a+...+a` with 400,000 terms is a left-leaning chain 400,000 nodes deep). Everything after
//! it recurses: the checker's walk, kind inference over subexpressions, the rules, and the
//! compiler's own drop of the tree. A tree deeper than [`MAX_NESTING`] is therefore refused
//! before any of them sees it, and it is freed here, node by node from an explicit stack.

use ruff_python_ast::token::{Token, TokenKind};
use ruff_python_ast::visitor::source_order::{SourceOrderVisitor, TraversalSignal};
use ruff_python_ast::visitor::transformer::{self, Transformer};
use ruff_python_ast::{self as ast, AnyNodeRef, AtomicNodeIndex, Expr, ModModule, Pattern, Stmt};
use ruff_text_size::{Ranged, TextRange};
use std::cell::RefCell;

/// The deepest tree synclint checks: a level per statement, expression and pattern (the parts
/// between them, a call's arguments or a comprehension's clauses, count none). No program CPython runs comes near it: CPython 3.11's tokenizer
/// refuses more than 200 nested brackets and 100 indentation levels, and its compiler stops at
/// about 3,000 nested expressions (`RecursionError: maximum recursion depth exceeded during
/// compilation` for a sum of 2,994 names). The checker's threads have stacks sized for it (see
/// [`CHECK_STACK_BYTES`]).
pub const MAX_NESTING: usize = 10_000;

/// The stack of every thread that checks files: room for a tree [`MAX_NESTING`] deep through
/// the deepest chain of recursive calls the checker and the rules make per level. It is address
/// space reserved, not memory used: a thread touches only what its deepest file needs.
pub const CHECK_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Whether a file's tree may nest deeper than `limit`, from its tokens alone: where it cannot,
/// the walk of [`first_too_deep`] is skipped (it would cost a tenth of parsing every file).
/// A statement is nested one level per indentation level (and one more for a suite on its own
/// line, `if a: b`), and within a statement each level of expressions and patterns holds a token
/// its parts do not: so no node is deeper than the indentation plus the tokens of its logical
/// line, plus two (the module's statement and a suite on the same line).
pub fn may_nest_deeper_than(tokens: &[Token], limit: usize) -> bool {
    // Most files have fewer tokens in all than the limit allows one line.
    if tokens.len() + 2 <= limit {
        return false;
    }
    let (mut indent, mut line) = (0usize, 0usize);
    for token in tokens {
        match token.kind() {
            TokenKind::Indent => indent += 1,
            TokenKind::Dedent => indent = indent.saturating_sub(1),
            TokenKind::Newline => {
                if indent + line + 2 > limit {
                    return true;
                }
                line = 0;
            }
            _ => line += 1,
        }
    }
    indent + line + 2 > limit
}

/// Where a tree first nests deeper than `limit`: the node one level past it. `None` where the
/// whole tree is within the limit.
pub fn first_too_deep(module: &ModModule, limit: usize) -> Option<TextRange> {
    let mut pending: Vec<(AnyNodeRef, usize)> = vec![(AnyNodeRef::from(module), 0)];
    let mut children = Children(Vec::new());
    while let Some((node, depth)) = pending.pop() {
        if depth > limit {
            return Some(node.range());
        }
        node.visit_source_order(&mut children);
        // Reversed, so that nodes are taken in source order: the first too deep is named.
        pending.extend(children.0.drain(..).rev().map(|child| {
            let level = child.is_statement() || child.is_expression() || child.is_pattern();
            (child, depth + usize::from(level))
        }));
    }
    None
}

/// `n` with a comma between each group of three digits, as messages spell counts: `10,000`.
pub fn with_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut spelled = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            spelled.push(',');
        }
        spelled.push(digit);
    }
    spelled
}

/// Collects a node's direct children: visited from their parent, each is entered and skipped.
struct Children<'a>(Vec<AnyNodeRef<'a>>);

impl<'a> SourceOrderVisitor<'a> for Children<'a> {
    fn enter_node(&mut self, node: AnyNodeRef<'a>) -> TraversalSignal {
        self.0.push(node);
        TraversalSignal::Skip
    }
}

/// Frees a tree of any depth: each statement, expression and pattern is moved out of its parent
/// (a leaf is left in its place) and freed once its own children have been moved out, so no
/// drop recurses more than a level.
pub fn dismantle(module: ModModule) {
    let taken = Taken::default();
    for mut stmt in module.body {
        taken.visit_stmt(&mut stmt);
    }
    // Each node is popped before its children are moved out: moving pushes onto the lists.
    loop {
        let stmt = taken.stmts.borrow_mut().pop();
        if let Some(mut stmt) = stmt {
            transformer::walk_stmt(&taken, &mut stmt);
            continue;
        }
        let expr = taken.exprs.borrow_mut().pop();
        if let Some(mut expr) = expr {
            transformer::walk_expr(&taken, &mut expr);
            continue;
        }
        let pattern = taken.patterns.borrow_mut().pop();
        match pattern {
            Some(mut pattern) => transformer::walk_pattern(&taken, &mut pattern),
            None => break,
        }
    }
}

/// The nodes moved out of the tree, waiting for their children to be moved out in turn.
#[derive(Default)]
struct Taken {
    stmts: RefCell<Vec<Stmt>>,
    exprs: RefCell<Vec<Expr>>,
    patterns: RefCell<Vec<Pattern>>,
}

impl Transformer for Taken {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        let leaf = Stmt::Pass(ast::StmtPass {
            node_index: AtomicNodeIndex::NONE,
            range: stmt.range(),
        });
        self.stmts.borrow_mut().push(std::mem::replace(stmt, leaf));
    }

    fn visit_expr(&self, expr: &mut Expr) {
        let leaf = Expr::NoneLiteral(ast::ExprNoneLiteral::default());
        self.exprs.borrow_mut().push(std::mem::replace(expr, leaf));
    }

    fn visit_pattern(&self, pattern: &mut Pattern) {
        let leaf = Pattern::MatchAs(ast::PatternMatchAs {
            node_index: AtomicNodeIndex::NONE,
            range: pattern.range(),
            pattern: None,
            name: None,
        });
        self.patterns.borrow_mut().push(std::mem::replace(pattern, leaf));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(source: &str) -> ModModule {
        ruff_python_parser::parse_module(source).unwrap().into_syntax()
    }

    /// The depth of the deepest node: the least limit it is within.
    fn depth(source: &str) -> usize {
        let module = module(source);
        (0..).find(|&limit| first_too_deep(&module, limit).is_none()).unwrap()
    }

    #[test]
    fn counts_every_kind_of_nesting() {
        // Module > statement > expression: `x = a` is two levels below the module.
        assert_eq!(depth("x = a\n"), 2);
        let flat = depth("x = a + b\n");
        assert_eq!(depth("x = a + b + c\n"), flat + 1);
        assert_eq!(depth("x = f(f(a))\n"), depth("x = f(a)\n") + 1);
        assert_eq!(depth("x = a.b.c\n"), depth("x = a.b\n") + 1);
        assert_eq!(
            depth("if a:\n    if b:\n        x = 1\n"),
            depth("if b:\n    x = 1\n") + 1
        );
        assert_eq!(depth("x = [[[a]]]\n"), depth("x = [a]\n") + 2);
        assert_eq!(
            depth("match x:\n    case [[a]]:\n        pass\n"),
            depth("match x:\n    case [a]:\n        pass\n") + 1
        );
        assert_eq!(depth("x = f'{f\"{a}\"}'\n"), depth("x = f'{a}'\n") + 1);
        assert_eq!(
            depth("x = [[a for a in b] for b in c]\n"),
            depth("x = [a for a in b]\n") + 1
        );
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(with_thousands(0), "0");
        assert_eq!(with_thousands(999), "999");
        assert_eq!(with_thousands(10_000), "10,000");
        assert_eq!(with_thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn the_tokens_bound_the_depth() {
        let shapes = [
            "x = a\n",
            "x = f(f(f(a)))\n",
            "x = a.b.c.d[0][1](2)\n",
            "x = -(-(not a))\n",
            "if a: b\n",
            "if a:\n    if b:\n        if c: d = [[[e]]]\n",
            "class A:\n    def f(self):\n        return lambda: lambda: (yield)\n",
            "x = f'{f\"{a:{b}}\"}'\n",
            "x = [[a for a in b if c] for b in d]\n",
            "match x:\n    case [[a, {1: b}], C(d=[e])]:\n        pass\n",
            "x = (a\n  + (b\n  + (c)))\n",
            "@d(e(f))\ndef g(*, a=h(i)) -> j[k]:\n    pass\n",
        ];
        for source in shapes {
            let parsed = ruff_python_parser::parse_module(source).unwrap();
            let deepest = (0..)
                .find(|&limit| first_too_deep(parsed.syntax(), limit).is_none())
                .unwrap();
            assert!(
                may_nest_deeper_than(parsed.tokens(), deepest - 1),
                "{source:?}: {deepest} levels"
            );
            assert!(!may_nest_deeper_than(parsed.tokens(), 64), "{source:?}");
        }
    }

    #[test]
    fn the_first_node_past_the_limit_is_named() {
        let source = "x = 1\ny = a + b + c\n";
        let module = module(source);
        let found = first_too_deep(&module, 3).unwrap();
        assert_eq!(&source[found], "a");
        assert_eq!(first_too_deep(&module, 4), None);
    }

    #[test]
    fn trees_of_any_depth_are_measured_and_freed_without_recursion() {
        // Each of these is a chain 200,000 nodes deep: any recursive walk or drop of it would
        // overflow a test thread's stack.
        let n = 200_000;
        let shapes = [
            format!("x = {}\n", vec!["a"; n].join("+")),
            format!("x = a{}\n", ".b".repeat(n)),
            format!("x = {}a\n", "-".repeat(n)),
            format!("x = {}a{}\n", "[".repeat(n / 2), "]".repeat(n / 2)),
            format!(
                "match x:\n    case {}a{}:\n        pass\n",
                "[".repeat(n / 2),
                "]".repeat(n / 2)
            ),
        ];
        for source in shapes {
            let module = module(&source);
            assert!(first_too_deep(&module, MAX_NESTING).is_some());
            dismantle(module);
        }
    }
}
