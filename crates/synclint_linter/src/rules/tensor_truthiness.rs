//! SYNC105: a tensor's truth value read by Python: `if t:`, `while t:`, `assert t`, `t and x`,
//! `t or 1.0`, `not t`, `a if t else b`.

use ruff_python_ast::{BoolOp, Expr, ExprBoolOp, ExprUnaryOp, Stmt, StmtAssert, StmtIf, UnaryOp};
use ruff_text_size::Ranged;

use super::edits::{statements_at, torch_name};
use super::locals::names_read;
use super::report;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;

const HELP: &str = "keep the decision on the device: `torch.where(cond, a, b)`, `torch.nan_to_num`, or `torch._assert_async(cond)` for checks";

fn flag(context: &mut RuleContext, expr: &Expr, what: &str) {
    let text = context.slice(expr);
    report(
        context,
        Rule::TensorTruthiness,
        expr.range(),
        format!("{what} `{text}` reads a GPU tensor's truth value and waits for the GPU"),
        HELP.to_string(),
    );
}

/// The test of an `if`, `elif`, `while` or conditional expression.
pub fn test(context: &mut RuleContext, test: &Expr) {
    if !context.enabled(Rule::TensorTruthiness) {
        return;
    }
    match test {
        // `not t` and `a and t` are reported where the truth value is taken.
        Expr::UnaryOp(unary) if unary.op == UnaryOp::Not => {}
        Expr::BoolOp(bool_op) => {
            if let Some(last) = bool_op.values.last()
                && context.model().is_maybe_cuda_tensor(last)
            {
                flag(context, last, "testing");
            }
        }
        _ if context.model().is_maybe_cuda_tensor(test) => flag(context, test, "testing"),
        _ => {}
    }
}

/// `if t:` whose branches only assign names (`if too_few: loss = 0.0 * loss`): fixable to one
/// `torch.where` per name, `loss = torch.where(too_few, 0.0 * loss, loss)` (unsafe: both values
/// are computed whatever the test, and a number assigned in a branch becomes a tensor).
pub fn if_stmt(context: &mut RuleContext, if_stmt: &StmtIf) {
    test(context, &if_stmt.test);
    if !context.enabled(Rule::TensorTruthiness)
        || matches!(if_stmt.test.as_ref(), Expr::BoolOp(_) | Expr::UnaryOp(_))
        || !context.model().is_maybe_cuda_tensor(&if_stmt.test)
    {
        return;
    }
    let Some(statements) = assignments_as_where(context, if_stmt) else {
        return;
    };
    let Some(replacement) = statements_at(context.source(), if_stmt.start(), &statements) else {
        return;
    };
    let mut edits = vec![Edit::replace(if_stmt.range(), replacement)];
    edits.extend(torch_name(context).1);
    let title = match statements.as_slice() {
        [one] => format!("Replace the `if` with `{one}`"),
        _ => format!("Replace the `if` with {} `torch.where` assignments", statements.len()),
    };
    context.attach_fix(Rule::TensorTruthiness, if_stmt.test.range(), title, Fix::unsafe_(edits));
}

/// `name = torch.where(test, if_true, if_false)` for each name the branches of `if_stmt` assign,
/// where they only assign tensors or numbers to plain names (an optional `else`, no `elif`). A
/// name only one branch assigns keeps its value in the other, so it must be bound before. No
/// value may read a name the branches assign, but its own: each `torch.where` reads what was
/// there before the `if`.
fn assignments_as_where<'a>(context: &RuleContext, if_stmt: &'a StmtIf) -> Option<Vec<String>> {
    let orelse: &[Stmt] = match if_stmt.elif_else_clauses.as_slice() {
        [] => &[],
        [clause] if clause.test.is_none() => &clause.body,
        _ => return None,
    };
    let branch = |body: &'a [Stmt]| -> Option<Vec<(&'a str, &'a Expr)>> {
        let mut assigned: Vec<(&str, &Expr)> = Vec::new();
        for stmt in body {
            let Stmt::Assign(assign) = stmt else { return None };
            let [Expr::Name(target)] = assign.targets.as_slice() else {
                return None;
            };
            if assigned.iter().any(|(name, _)| *name == target.id.as_str()) {
                return None;
            }
            assigned.push((target.id.as_str(), &assign.value));
        }
        Some(assigned)
    };
    let (when_true, when_false) = (branch(&if_stmt.body)?, branch(orelse)?);
    let mut names: Vec<&str> = when_true.iter().map(|(name, _)| *name).collect();
    for (name, _) in &when_false {
        if !names.contains(name) {
            names.push(name);
        }
    }
    let model = context.model();
    let value_of = |values: &[(&str, &Expr)], name: &str| -> Option<String> {
        match values.iter().find(|(assigned, _)| *assigned == name) {
            Some((_, value)) => {
                let reads_other = names_read(value)
                    .iter()
                    .any(|read| *read != name && names.contains(read));
                let usable =
                    matches!(model.kind_of(value), Kind::Tensor(_) | Kind::Number) && keeps_shapes(context, value);
                (!reads_other && usable).then(|| context.slice(value).to_string())
            }
            // Unchanged in this branch: what it held before the `if`.
            None => matches!(model.lookup(name)?.kind, Kind::Tensor(_) | Kind::Number).then(|| name.to_string()),
        }
    };
    // A name holding a number in both branches would become a tensor: later Python uses of it
    // (`if scale > 1:`, `f"{scale}"`) would then sync.
    let tensor = |values: &[(&str, &Expr)], name: &str| match values.iter().find(|(assigned, _)| *assigned == name) {
        Some((_, value)) => model.kind_of(value).tensor().is_some(),
        None => model
            .lookup(name)
            .is_some_and(|binding| binding.kind.tensor().is_some()),
    };
    let (torch, _) = torch_name(context);
    let test = context.slice(&*if_stmt.test);
    names
        .iter()
        .map(|name| {
            let if_true = value_of(&when_true, name)?;
            let if_false = value_of(&when_false, name)?;
            (tensor(&when_true, name) || tensor(&when_false, name))
                .then(|| format!("{name} = {torch}.where({test}, {if_true}, {if_false})"))
        })
        .collect()
}

/// Whether `value` is built elementwise from names and numbers (arithmetic, comparisons, `*_like`
/// factories, pointwise functions and methods, views that only add axes): `torch.where` then
/// gives each position what the branch would have, where a concatenation, a slice or a reduction
/// would give a value of another shape than the other branch's.
fn keeps_shapes(context: &RuleContext, value: &Expr) -> bool {
    const POINTWISE: [&str; 30] = [
        "zeros_like",
        "ones_like",
        "full_like",
        "empty_like",
        "rand_like",
        "randn_like",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "sigmoid",
        "tanh",
        "relu",
        "clamp",
        "clip",
        "maximum",
        "minimum",
        "where",
        "nan_to_num",
        "detach",
        "clone",
        "float",
        "half",
        "double",
        "bfloat16",
        "long",
        "int",
        "bool",
        "to",
    ];
    match value {
        Expr::Name(_) | Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => true,
        // `self.scale`: an attribute read (a tensor or a number kept on the object).
        Expr::Attribute(attribute) => matches!(&*attribute.value, Expr::Name(_)),
        Expr::UnaryOp(unary) => keeps_shapes(context, &unary.operand),
        Expr::BinOp(binary) => keeps_shapes(context, &binary.left) && keeps_shapes(context, &binary.right),
        Expr::Compare(compare) => {
            keeps_shapes(context, &compare.left) && compare.comparators.iter().all(|c| keeps_shapes(context, c))
        }
        // `m[:, None]`: new axes only.
        Expr::Subscript(subscript) => {
            let axes = match &*subscript.slice {
                Expr::Tuple(tuple) => tuple.elts.iter().collect(),
                other => vec![other],
            };
            keeps_shapes(context, &subscript.value)
                && axes.iter().all(|axis| match axis {
                    Expr::NoneLiteral(_) | Expr::EllipsisLiteral(_) => true,
                    Expr::Slice(slice) => slice.lower.is_none() && slice.upper.is_none() && slice.step.is_none(),
                    _ => false,
                })
        }
        Expr::Call(call) => {
            let pointwise = match context.callee(call).as_deref() {
                Some(callee) => callee
                    .strip_prefix("torch.")
                    .is_some_and(|function| POINTWISE.contains(&function.trim_start_matches("nn.functional."))),
                None => match super::method_call(call) {
                    Some((receiver, method)) => POINTWISE.contains(&method) && keeps_shapes(context, receiver),
                    None => false,
                },
            };
            pointwise
                && call.arguments.args.iter().all(|arg| keeps_shapes(context, arg))
                && call
                    .arguments
                    .keywords
                    .iter()
                    .all(|k| k.arg.is_some() && (keeps_shapes(context, &k.value) || is_option(&k.value)))
        }
        _ => false,
    }
}

/// A keyword argument that sets an option, not a value (`dtype=torch.float32`, `device="cuda"`,
/// `non_blocking=True`).
fn is_option(value: &Expr) -> bool {
    matches!(
        value,
        Expr::StringLiteral(_) | Expr::Attribute(_) | Expr::NoneLiteral(_) | Expr::BooleanLiteral(_)
    )
}

/// `t and x`, `t or 1.0`: every value but the last is tested.
pub fn bool_op(context: &mut RuleContext, bool_op: &ExprBoolOp) {
    if !context.enabled(Rule::TensorTruthiness) {
        return;
    }
    let operator = if bool_op.op == BoolOp::And {
        "`and` on"
    } else {
        "`or` on"
    };
    let (_, tested) = bool_op.values.split_last().expect("a BoolOp has at least two values");
    for value in tested {
        if context.model().is_maybe_cuda_tensor(value) {
            flag(context, value, operator);
        }
    }
}

/// `not t`.
pub fn not(context: &mut RuleContext, unary: &ExprUnaryOp) {
    if context.enabled(Rule::TensorTruthiness)
        && unary.op == UnaryOp::Not
        && context.model().is_maybe_cuda_tensor(&unary.operand)
    {
        let text = context.slice(&*unary.operand);
        report(
            context,
            Rule::TensorTruthiness,
            unary.range(),
            format!("`not {text}` reads a GPU tensor's truth value and waits for the GPU"),
            HELP.to_string(),
        );
    }
}

/// `assert t`: fixable to `torch._assert_async(t)` (unsafe: it fails later, asynchronously,
/// and is a private API).
pub fn assert(context: &mut RuleContext, assert: &StmtAssert) {
    if !context.enabled(Rule::TensorTruthiness) || !context.model().is_maybe_cuda_tensor(&assert.test) {
        return;
    }
    let condition = context.slice(&*assert.test);
    let message = format!("`assert {condition}` reads a GPU tensor's truth value and waits for the GPU");
    // `assert` evaluates its message only on failure; the call evaluates it every time. Keep a
    // string literal; a computed message (an f-string of a tensor would sync itself) gets no fix.
    let fixable = assert.msg.as_deref().is_none_or(Expr::is_string_literal_expr);
    let (torch, import) = torch_name(context);
    let replacement = match &assert.msg {
        Some(msg) => format!("{torch}._assert_async({condition}, {})", context.slice(&**msg)),
        None => format!("{torch}._assert_async({condition})"),
    };
    let mut diagnostic = Diagnostic::new(
        Rule::TensorTruthiness,
        assert.test.range(),
        message,
        format!("check on the device: `{replacement}`"),
    );
    let mut edits = vec![Edit::replace(assert.range(), replacement.clone())];
    edits.extend(import);
    if fixable && !super::edits::drops_comment(context.source(), &edits) {
        diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::unsafe_(edits));
    }
    context.report(diagnostic);
}
