//! SYNC301: `cross_entropy` / `nll_loss` (or their modules) on boolean-masked logits or
//! targets, where `ignore_index=` keeps the shapes fixed.

use ruff_python_ast::{CmpOp, Expr, ExprCall, ExprContext, Number, Stmt, StmtFunctionDef, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use super::{locals, method_call};
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::parse::literal_text;
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{Kind, ModuleKind};

/// `x[mask]` (inline) on a tensor that may be on the GPU: (`x`, `mask`).
fn masked<'e>(context: &RuleContext, expr: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
    let Expr::Subscript(subscript) = expr else { return None };
    (subscript.ctx == ExprContext::Load
        && context.model().is_boolean_tensor(&subscript.slice)
        && context.model().is_maybe_cuda_tensor(&subscript.value))
    .then_some((&*subscript.value, &*subscript.slice))
}

/// The masked read inside dtype casts: `logits[m].float()` -> `logits[m]`.
fn strip_casts(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(call) if call.arguments.is_empty() => match method_call(call) {
            Some((inner, "float" | "double" | "half" | "bfloat16" | "long" | "contiguous")) => strip_casts(inner),
            _ => expr,
        },
        _ => expr,
    }
}

/// A variable assigned a masked read first (`sel = x[mask]`).
fn masked_variable(context: &RuleContext, expr: &Expr) -> bool {
    let Expr::Name(name) = expr else { return false };
    let value = context
        .model()
        .lookup(name.id.as_str())
        .and_then(|binding| binding.value);
    value.is_some_and(|value| masked(context, value).is_some())
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::MaskedLoss) {
        return;
    }
    let is_loss = match callee {
        Some("torch.nn.functional.cross_entropy" | "torch.nn.functional.nll_loss") => true,
        Some(_) => false,
        None => context.model().calls_module(call, ModuleKind::ClassIndexLoss),
    };
    if !is_loss || call.arguments.find_keyword("ignore_index").is_some() {
        return;
    }
    let args = &call.arguments.args;
    let (Some(input), Some(target)) = (args.first(), args.get(1)) else {
        return;
    };
    let (input_masked, target_masked) = (masked(context, input), masked(context, target));
    let (input_read, target_read) = (strip_casts(input), strip_casts(target));
    let masked_somewhere = input_masked.is_some()
        || target_masked.is_some()
        || masked(context, input_read).is_some()
        || masked(context, target_read).is_some()
        || masked_variable(context, input)
        || masked_variable(context, target);
    if !masked_somewhere {
        return;
    }
    // The mask reads are this finding; SYNC203 does not report them again.
    for read in [input_read, target_read] {
        context.supersede(Rule::BooleanMaskRead, read.range());
    }
    let loss = context.slice(&*call.func);
    let mut diagnostic = Diagnostic::new(
        Rule::MaskedLoss,
        call.range(),
        format!("`{loss}` on boolean-masked inputs waits for the GPU to count the mask"),
        "pass the unmasked tensors with `ignore_index=` set to the value the mask drops".to_string(),
    );
    if let Some((title, fix)) = ignore_index_fix(context, call, callee.is_some()) {
        diagnostic = diagnostic.with_fix(title, fix);
    }
    context.report(diagnostic);
}

/// The unmasked tensors behind a masked loss call, traced back through the locals of the
/// function that made them (`kept = labels[keep]`, `logits.permute(0, 2, 3, 1)[keep]`,
/// `.reshape(-1, C)`, a mask expanded over the class dimension).
struct Unmasked<'a> {
    /// The logits, as the call may read them: `logits` for class-first logits permuted to the
    /// end before the mask, else the masked tensor with its leading dimensions flattened.
    logits: String,
    labels: &'a Expr,
    /// The mask's value where it is defined (`labels != IGN`), or as written.
    mask: &'a Expr,
    /// The mask as the target's read spells it (`keep`).
    mask_read: &'a Expr,
    /// The locals the inputs were made through.
    through: Vec<&'a str>,
    /// The masked reads (SYNC203 does not report those the fix removes again).
    reads: [TextRange; 2],
}

/// `x.reshape(-1, C)` / `x.view(-1, C)` -> `x`: the rows a masked read gave back.
fn rows(expr: &Expr) -> &Expr {
    if let Expr::Call(call) = expr
        && let Some((receiver, "reshape" | "view")) = method_call(call)
        && call.arguments.keywords.is_empty()
        && matches!(call.arguments.args.first(), Some(Expr::UnaryOp(minus)) if minus.op == UnaryOp::USub
            && matches!(&*minus.operand, Expr::NumberLiteral(one) if matches!(one.value, Number::Int(ref i) if *i == 1)))
        && call.arguments.args.len() == 2
    {
        return receiver;
    }
    expr
}

/// `m.unsqueeze(-1).expand(...)` / `m.expand_as(x)` -> `m`: a mask broadcast over the class
/// dimension keeps the rows `m` keeps.
fn mask_base(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(call) => match method_call(call) {
            Some((receiver, "unsqueeze" | "expand" | "expand_as")) => mask_base(receiver),
            _ => expr,
        },
        _ => expr,
    }
}

/// What a local name holds where the function binds it once (so the value that reaches any
/// read of it), followed through such names; the names followed are added to `through`.
fn local_value<'a>(context: &RuleContext<'_, 'a>, mut expr: &'a Expr, through: &mut Vec<&'a str>) -> &'a Expr {
    let body = context.enclosing_body();
    for _ in 0..8 {
        let Expr::Name(name) = expr else { break };
        let name = name.id.as_str();
        let Some(value) = context.model().lookup(name).and_then(|binding| binding.value) else {
            break;
        };
        if locals::binders_of(body, name).len() != 1 {
            break;
        }
        if !through.contains(&name) {
            through.push(name);
        }
        expr = value;
    }
    expr
}

/// Whether the text of `expr` means at `call` what it meant where it was written: no name it
/// reads is bound again in between.
fn stable_until(context: &RuleContext, expr: &Expr, call: &ExprCall) -> bool {
    if expr.start() >= call.start() {
        // Written in the call itself.
        return true;
    }
    let body = context.enclosing_body();
    let between = TextRange::new(expr.start(), call.start());
    locals::names_read(expr).into_iter().all(|name| {
        locals::binders_of(body, name)
            .iter()
            .all(|binder| !between.contains(binder.start()) || binder.start() == expr.start())
    })
}

fn unmasked<'a>(
    context: &RuleContext<'_, 'a>,
    call: &ExprCall,
    input: &'a Expr,
    target: &'a Expr,
) -> Option<Unmasked<'a>> {
    let mut through = Vec::new();
    let input = local_value(context, strip_casts(rows(strip_casts(input))), &mut through);
    let Expr::Subscript(logits_read) = local_value(context, strip_casts(input), &mut through) else {
        return None;
    };
    let Expr::Subscript(labels_read) = local_value(context, strip_casts(target), &mut through) else {
        return None;
    };
    let logits_mask = local_value(context, mask_base(&logits_read.slice), &mut through);
    let labels_mask = local_value(context, mask_base(&labels_read.slice), &mut through);
    if context.slice(logits_mask) != context.slice(labels_mask)
        || !context.model().is_boolean_tensor(&labels_read.slice)
        || !context.model().is_maybe_cuda_tensor(&labels_read.value)
    {
        return None;
    }
    let masked_logits = local_value(context, &logits_read.value, &mut through);
    let permuted = match masked_logits {
        Expr::Call(inner) => match method_call(inner) {
            Some((base, "permute")) if context.slice(&inner.arguments).replace(' ', "") == "(0,2,3,1)" => Some(base),
            _ => None,
        },
        _ => None,
    };
    let (logits, logits_expr) = match permuted {
        Some(base) => (context.slice(base).to_string(), base),
        None => (
            format!(
                "{}.flatten(0, -2)",
                super::edits::parenthesized(context, &logits_read.value)
            ),
            &*logits_read.value,
        ),
    };
    let labels = &*labels_read.value;
    if !stable_until(context, logits_expr, call) || !stable_until(context, labels, call) {
        return None;
    }
    Some(Unmasked {
        logits,
        labels,
        mask: labels_mask,
        mask_read: &labels_read.slice,
        through,
        reads: [logits_read.range(), labels_read.range()],
    })
}

/// `loss(logits[m], target[m])` with `m = target != IGN` ->
/// `loss(logits.flatten(0, -2), target.flatten(), ignore_index=IGN)`; with class-first logits
/// permuted to the end (`logits.permute(0, 2, 3, 1)[m]`) -> `loss(logits, target, ...)`; with
/// any other mask -> `loss(logits.flatten(0, -2), target.masked_fill(~m, -100).flatten(),
/// ignore_index=-100)`. Flattening the leading dimensions makes `(B, T, C)` logits with a
/// `(B, T)` mask the `(B * T, C)` rows the masked call saw, and is a no-op for `(N, C)`.
/// The masked inputs may be made through locals (deleted when nothing else reads them), and a
/// loss module built in `__init__` (`self.criterion = nn.CrossEntropyLoss()`, called nowhere
/// else) gets `ignore_index=` where it is built.
fn ignore_index_fix(context: &mut RuleContext, call: &ExprCall, functional: bool) -> Option<(String, Fix)> {
    let reduction_none = call
        .arguments
        .find_keyword("reduction")
        .is_some_and(|k| matches!(&k.value, Expr::StringLiteral(s) if literal_text(&s.value) == Some("none")));
    // `reduction="none"` would return one loss per position instead of one per kept position;
    // `**kwargs` may hold `ignore_index` already.
    if reduction_none
        || call.arguments.keywords.iter().any(|k| k.arg.is_none())
        || call.arguments.args.iter().any(Expr::is_starred_expr)
    {
        return None;
    }
    let args = &call.arguments.args;
    let (input, target) = (args.first()?, args.get(1)?);
    let unmasked = unmasked(context, call, input, target)?;
    // `m = target != IGN` with IGN a number or a constant: the mask drops exactly the targets
    // `ignore_index=IGN` ignores.
    let ignored = match unmasked.mask {
        Expr::Compare(compare) => match (&*compare.ops, &*compare.comparators) {
            ([CmpOp::NotEq], [ignored])
                if context.slice(&*compare.left) == context.slice(unmasked.labels)
                    && !matches!(ignored, Expr::Call(_))
                    && !matches!(context.model().kind_of(ignored), Kind::Tensor(_)) =>
            {
                Some(ignored)
            }
            _ => None,
        },
        _ => None,
    };
    let labels_atom = super::edits::parenthesized(context, unmasked.labels);
    let mut kept_names: Vec<&str> = Vec::new();
    let (new_target, ignore_index) = match ignored {
        Some(ignored) => (labels_atom, context.slice(ignored).to_string()),
        None => {
            kept_names.extend(locals::names_read(unmasked.mask_read));
            (
                format!(
                    "{labels_atom}.masked_fill(~{}, -100)",
                    super::edits::parenthesized(context, unmasked.mask_read)
                ),
                "-100".to_string(),
            )
        }
    };
    let new_target = if unmasked.logits.ends_with(".flatten(0, -2)") {
        format!("{new_target}.flatten()")
    } else {
        new_target
    };
    let mut edits = vec![
        Edit::replace(args[0].range(), unmasked.logits.clone()),
        Edit::replace(args[1].range(), new_target),
    ];
    if functional {
        edits.push(super::edits::add_argument(
            context,
            call,
            &format!("ignore_index={ignore_index}"),
        )?);
    } else {
        edits.extend(constructor_edit(context, call, ignored)?);
    }
    let replaced = [args[0].range(), args[1].range()];
    edits.extend(dead_locals(context, &unmasked.through, &kept_names, &replaced)?);
    // A masked read the fix removes is this finding. One it leaves (its local is read elsewhere
    // too) still waits after the fix, so SYNC203 reports it as its own.
    for read in unmasked.reads {
        if edits.iter().any(|edit| edit.range.contains_range(read)) {
            context.supersede(Rule::BooleanMaskRead, read);
        }
    }
    if super::edits::drops_comment(context.source(), &edits) {
        return None;
    }
    Some((
        format!("Pass the unmasked tensors with `ignore_index={ignore_index}`"),
        Fix::unsafe_(edits),
    ))
}

/// `ignore_index=IGN` where the loss module `call` calls is built: `self.criterion =
/// nn.CrossEntropyLoss()` in `__init__`, where the class assigns and reads that attribute once
/// each (another call of the module would change too). No edit where the module's default
/// (-100) is the one needed; `None` where IGN cannot be spelled in `__init__` (a number, or an
/// attribute `__init__` sets before building the module, can).
fn constructor_edit(context: &RuleContext, call: &ExprCall, ignored: Option<&Expr>) -> Option<Vec<Edit>> {
    let Expr::Attribute(attribute) = &*call.func else {
        return None;
    };
    let Expr::Name(receiver) = &*attribute.value else {
        return None;
    };
    let model = context.model();
    let function = model.current_function()?;
    if receiver_name(function.def)? != receiver.id.as_str() {
        return None;
    }
    let (mut reads, mut stores, mut built) = (0, 0, None);
    for &id in model.classes[function.class? as usize].methods.values() {
        let method = model.function(id).def;
        let Some(me) = receiver_name(method) else { continue };
        let (assigned, read) = locals::attribute_uses(&method.body, me, attribute.attr.as_str());
        reads += read;
        stores += assigned.len();
        if method.name.as_str() == "__init__"
            && let [Stmt::Assign(assign)] = assigned.as_slice()
        {
            built = Some((method, me, assign));
        }
    }
    let (init, me, assign) = built.filter(|_| reads == 1 && stores == 1)?;
    let (Expr::Call(constructor), [Expr::Attribute(_)]) = (&*assign.value, assign.targets.as_slice()) else {
        return None;
    };
    let arguments = &constructor.arguments;
    // `CrossEntropyLoss(weight, size_average, ignore_index, ...)`: a third positional argument
    // is the index already.
    if arguments.args.len() > 2
        || arguments.args.iter().any(Expr::is_starred_expr)
        || arguments.keywords.iter().any(|k| {
            k.arg.as_ref().is_none_or(|arg| arg.as_str() == "ignore_index")
                || (k.arg.as_ref().is_some_and(|arg| arg.as_str() == "reduction")
                    && !matches!(&k.value, Expr::StringLiteral(s) if literal_text(&s.value) != Some("none")))
        })
    {
        return None;
    }
    let Some(ignored) = ignored else {
        return Some(Vec::new());
    };
    let spelled = match ignored {
        Expr::NumberLiteral(_) => context.slice(ignored).to_string(),
        Expr::UnaryOp(minus) if minus.op == UnaryOp::USub && minus.operand.is_number_literal_expr() => {
            context.slice(ignored).to_string()
        }
        // `self.ignore`: set in `__init__` before the module is built.
        Expr::Attribute(value) if matches!(&*value.value, Expr::Name(name) if name.id == receiver.id) => {
            let (block, at) = locals::block_of(&init.body, assign.range())?;
            let (set_before, _) = locals::attribute_uses(&block[..at], me, value.attr.as_str());
            if set_before.is_empty() {
                return None;
            }
            format!("{me}.{}", value.attr)
        }
        _ => return None,
    };
    let edit = super::edits::add_argument(context, constructor, &format!("ignore_index={spelled}"))?;
    Some(vec![edit])
}

/// The name of a method's instance parameter (`self`).
fn receiver_name(def: &StmtFunctionDef) -> Option<&str> {
    let parameters = &def.parameters;
    parameters
        .posonlyargs
        .iter()
        .chain(&parameters.args)
        .next()
        .map(|parameter| parameter.parameter.name.as_str())
}

/// Deletes the statements binding `through` (but `kept`) that nothing reads once the call reads
/// the unmasked tensors: every read of the name is in `replaced` or in another deleted
/// statement. Only values without side effects go (indexing, comparisons, views, casts).
/// `None` where such a statement shares its line.
fn dead_locals(context: &RuleContext, through: &[&str], kept: &[&str], replaced: &[TextRange]) -> Option<Vec<Edit>> {
    let body = context.enclosing_body();
    let mut dead: Vec<(&str, &Stmt)> = through
        .iter()
        .filter(|name| !kept.contains(name))
        .filter_map(|&name| match locals::binders_of(body, name).as_slice() {
            [binder @ Stmt::Assign(assign)] if without_side_effects(&assign.value) => Some((name, *binder)),
            _ => None,
        })
        .collect();
    loop {
        let before = dead.len();
        let gone: Vec<TextRange> = replaced
            .iter()
            .copied()
            .chain(dead.iter().map(|(_, stmt)| stmt.range()))
            .collect();
        dead.retain(|(name, _)| {
            locals::reads_of(body, name)
                .iter()
                .all(|read| gone.iter().any(|range| range.contains_range(read.range())))
        });
        if dead.len() == before {
            break;
        }
    }
    // A block left with no statement would not parse.
    let emptied = dead.iter().any(|(_, stmt)| {
        locals::block_of(body, stmt.range())
            .is_some_and(|(block, _)| block.iter().all(|s| dead.iter().any(|(_, d)| std::ptr::eq(*d, s))))
    });
    if emptied {
        return None;
    }
    dead.iter()
        .map(|(_, stmt)| super::edits::delete_statement_line(context.source(), stmt.range()))
        .collect()
}

/// Whether evaluating `expr` only reads: names, attributes, numbers, indexing, arithmetic,
/// comparisons, and the view and cast methods of tensors.
fn without_side_effects(expr: &Expr) -> bool {
    const READS: [&str; 17] = [
        "permute",
        "reshape",
        "view",
        "unsqueeze",
        "squeeze",
        "expand",
        "expand_as",
        "flatten",
        "transpose",
        "contiguous",
        "float",
        "long",
        "int",
        "bool",
        "half",
        "bfloat16",
        "double",
    ];
    match expr {
        Expr::Name(_) | Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) => true,
        Expr::Attribute(attribute) => without_side_effects(&attribute.value),
        Expr::UnaryOp(unary) => without_side_effects(&unary.operand),
        Expr::BinOp(binary) => without_side_effects(&binary.left) && without_side_effects(&binary.right),
        Expr::Compare(compare) => {
            without_side_effects(&compare.left) && compare.comparators.iter().all(without_side_effects)
        }
        Expr::Subscript(subscript) => without_side_effects(&subscript.value) && without_side_effects(&subscript.slice),
        Expr::Tuple(tuple) => tuple.elts.iter().all(without_side_effects),
        Expr::Slice(slice) => [&slice.lower, &slice.upper, &slice.step]
            .into_iter()
            .flatten()
            .all(|part| without_side_effects(part)),
        Expr::Call(call) => {
            matches!(method_call(call), Some((receiver, method)) if READS.contains(&method) && without_side_effects(receiver))
                && call.arguments.args.iter().all(without_side_effects)
                && call
                    .arguments
                    .keywords
                    .iter()
                    .all(|k| k.arg.is_some() && without_side_effects(&k.value))
        }
        _ => false,
    }
}
