//! SYNC206: output sizes computed from data: `repeat_interleave` with tensor repeats and no
//! `output_size=`, `F.one_hot` without `num_classes=`.

use ruff_python_ast::{Expr, ExprCall, UnaryOp};
use ruff_text_size::Ranged;

use super::{argument, method_call, report, torch_input_may_be_cuda};
use crate::registry::Rule;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::SizeFromData) {
        return;
    }
    let qualified = callee;
    match qualified {
        Some("torch.nn.functional.one_hot") => {
            let num_classes = argument(call, "num_classes", 1);
            let inferred = match num_classes {
                None => true,
                Some(Expr::UnaryOp(unary)) => unary.op == UnaryOp::USub,
                Some(_) => false,
            };
            if inferred && torch_input_may_be_cuda(context, argument(call, "tensor", 0)) {
                report(
                    context,
                    Rule::SizeFromData,
                    call.range(),
                    "`one_hot` without `num_classes` reads the largest label from the GPU".to_string(),
                    "pass `num_classes=N`".to_string(),
                );
            }
        }
        Some("torch.repeat_interleave") => {
            let repeats = if call.arguments.args.len() == 1 {
                argument(call, "repeats", 0)
            } else {
                argument(call, "repeats", 1)
            };
            repeat_interleave(context, call, repeats);
        }
        Some(_) => {}
        None => {
            if let Some((receiver, "repeat_interleave")) = method_call(call)
                && context.model().is_maybe_cuda_tensor(receiver)
            {
                let repeats = argument(call, "repeats", 0);
                repeat_interleave(context, call, repeats);
            }
        }
    }
}

fn repeat_interleave(context: &mut RuleContext, call: &ExprCall, repeats: Option<&Expr>) {
    let Some(repeats) = repeats else { return };
    if call.arguments.find_keyword("output_size").is_some() || !context.model().is_maybe_cuda_tensor(repeats) {
        return;
    }
    let r = context.slice(repeats);
    report(
        context,
        Rule::SizeFromData,
        call.range(),
        format!("`repeat_interleave` with the tensor repeats `{r}` sums them on the host to size its output"),
        format!("pass `output_size=` (the total of `{r}`, when known on the host)"),
    );
}
