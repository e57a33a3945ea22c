//! SYNC106: formatting a CUDA tensor as text: `print(t)`, f-strings, `str/repr/format(t)`,
//! `%`-formatting, `"{}".format(t)`, logging calls that will emit.

use ruff_python_ast::{Expr, ExprBinOp, ExprCall, ExprFString, Operator};
use ruff_text_size::{Ranged, TextRange};

use super::{method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;
use crate::semantic::names::contains_ignoring_ascii_case;

fn flag(context: &mut RuleContext, expr: &Expr, how: &str) {
    flag_tensors(context, expr, how, false);
}

/// `several`: `expr` holds GPU tensors, each formatted (`*losses.values()`).
fn flag_tensors(context: &mut RuleContext, expr: &Expr, how: &str, several: bool) {
    report_formatting(context, expr, expr.range(), how, several);
}

/// [`flag`], reported at `at` (a range that holds `expr`).
fn flag_at(context: &mut RuleContext, expr: &Expr, at: TextRange, how: &str) {
    report_formatting(context, expr, at, how, false);
}

fn report_formatting(context: &mut RuleContext, expr: &Expr, at: TextRange, how: &str, several: bool) {
    let text = context.slice(expr);
    let what = if several {
        format!("the GPU tensors in `{text}` copies them")
    } else {
        format!("the GPU tensor `{text}` copies it")
    };
    report(
        context,
        Rule::TensorFormatting,
        at,
        format!("{how} {what} to the host and waits for the GPU"),
        "keep a running tensor and format it once per log interval (under `if step % N == 0:`)".to_string(),
    );
}

/// Logging levels that are on by default (`warning` and above). Lazy `%s` arguments of a call
/// below the logger's level are never formatted (measured: `logging.info('%s', t)` at the
/// default level returns in 0.01 ms), so `info` and `debug` are not flagged.
fn logging_level(context: &RuleContext, call: &ExprCall) -> Option<&'static str> {
    let (receiver, method) = method_call(call)?;
    let level = match method {
        "warning" | "warn" => "warning",
        "error" => "error",
        "critical" | "fatal" => "critical",
        "exception" => "exception",
        "log" => "log",
        _ => return None,
    };
    let is_logger = context.model().qualified_name(receiver).is_some_and(|q| q == "logging")
        || match receiver {
            Expr::Name(name) => contains_ignoring_ascii_case(name.id.as_str(), "log"),
            Expr::Attribute(attribute) => contains_ignoring_ascii_case(attribute.attr.as_str(), "log"),
            _ => false,
        };
    is_logger.then_some(level)
}

pub fn call(context: &mut RuleContext, call: &ExprCall) {
    if !context.enabled(Rule::TensorFormatting) {
        return;
    }
    let args = &call.arguments.args;
    if let Expr::Name(func) = call.func.as_ref() {
        // A call of a name is neither `str.format` nor a logger's method.
        let name = func.id.as_str();
        match name {
            "print" if context.model().is_builtin(name) => {
                if let Some(arg) = args.iter().find(|arg| context.model().is_maybe_cuda_tensor(arg)) {
                    flag(context, arg, "printing");
                }
            }
            "str" | "repr" | "format" | "ascii"
                if context.model().is_builtin(name)
                    && args.first().is_some_and(|a| context.model().is_maybe_cuda_tensor(a)) =>
            {
                flag(context, &args[0], &format!("`{name}()` of"));
            }
            _ => {}
        }
        return;
    }
    if let Some((receiver, "format")) = method_call(call) {
        if matches!(receiver, Expr::StringLiteral(_))
            && let Some(arg) = args
                .iter()
                .chain(call.arguments.keywords.iter().map(|k| &k.value))
                .find(|a| context.model().is_maybe_cuda_tensor(a))
        {
            flag(context, arg, "`str.format` of");
        }
        return;
    }
    if let Some(level) = logging_level(context, call) {
        // The message itself (an f-string) is reported where it is built.
        let lazy = args.iter().skip(if level == "log" { 2 } else { 1 });
        if let Some(arg) = lazy.into_iter().find(|a| context.model().is_maybe_cuda_tensor(a)) {
            flag(context, arg, &format!("logging (`{level}`)"));
        }
    }
}

pub(crate) fn fstring(context: &mut RuleContext, fstring: &ExprFString) {
    if !context.enabled(Rule::TensorFormatting) {
        return;
    }
    let mut flagged = Vec::new();
    for part in fstring.value.f_strings() {
        for element in part.elements.interpolations() {
            if context.model().is_maybe_cuda_tensor(&element.expression) {
                flagged.push(&*element.expression);
            }
        }
    }
    for expr in flagged {
        flag(context, expr, "an f-string of");
    }
}

/// `"%f" % t`, `"%s" % (t,)`, `("%11s" * 2 + "%11.4g" * 3) % (epoch, mem, *losses)` (each
/// element of a GPU vector unpacked into the tuple is read on the host).
pub(crate) fn percent_format(context: &mut RuleContext, binop: &ExprBinOp) {
    if !context.enabled(Rule::TensorFormatting) || binop.op != Operator::Mod {
        return;
    }
    let format_string = binop.left.is_string_literal_expr()
        || (matches!(&*binop.left, Expr::BinOp(_)) && context.model().kind_of(&binop.left) == Kind::Str);
    if !format_string {
        return;
    }
    let model = context.model();
    // A GPU tensor, or where unpacked, GPU tensors (`*losses.values()` of a dict of them).
    let read_on_the_host = |element: &&Expr| match element {
        Expr::Starred(starred) => {
            model.is_maybe_cuda_tensor(&starred.value)
                || matches!(model.kind_of(&starred.value), Kind::TensorSequence(facts) if facts.may_be_cuda())
        }
        element => model.is_maybe_cuda_tensor(element),
    };
    let found = match binop.right.as_ref() {
        Expr::Tuple(tuple) => tuple.elts.iter().find(read_on_the_host),
        other => Some(other).filter(read_on_the_host),
    };
    match found {
        Some(Expr::Starred(starred)) => {
            let several = matches!(model.kind_of(&starred.value), Kind::TensorSequence(_));
            flag_tensors(context, &starred.value, "`%`-formatting", several);
        }
        // A format split over lines is reported where the `%` formatting starts, the line a
        // reader (and a `# noqa`) looks at, not the line of the element.
        Some(element) if context.source()[TextRange::new(binop.start(), element.start())].contains('\n') => {
            let at = TextRange::new(binop.start(), element.end());
            flag_at(context, element, at, "`%`-formatting");
        }
        Some(element) => flag(context, element, "`%`-formatting"),
        None => {}
    }
}
