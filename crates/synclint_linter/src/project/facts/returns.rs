//! What the project functions a file's hot code calls return, spelled for the file: by the
//! name it calls ([`FileFacts::returns`]) and, for calls through objects, by where the call is
//! ([`FileFacts::results`]).
//!
//! It imports from [`super`], [`super::wanted`] and the project's passes.

use rustc_hash::FxHashMap;

use super::wanted::Wanted;
use crate::project::hotness::{HotFunctions, runs_hot};
use crate::project::modules::{ModuleInfo, Resolved};
use crate::project::{Project, ProjectFunction};
use crate::semantic::{
    Callee, Device, FileFacts, HotContext, Kind, ProjectKind, ProjectReturns, Question, Questions, TensorFacts,
};

impl<'m> Project<'m> {
    /// What `function` returns, spelled for `file`.
    fn returns_of(&self, (target, id): ProjectFunction, file: usize) -> ProjectReturns {
        let function = &self.modules[target].summary.functions[id as usize];
        ProjectReturns {
            kind: self.respell(target, &function.returns, file),
            tuple: function.details().returns_tuple.clone(),
            by_type: function.details().returns_by_type.clone(),
        }
    }

    /// Tells `file` (of `module`) what the project functions it calls by name return, where its
    /// hot code asked a rule's question the returns answer or calls them for a value passed on
    /// (`wanted`), and those told before.
    pub(super) fn tell_returns(
        &self,
        hot: &HotFunctions,
        applied: &[&FileFacts],
        wanted: &Wanted,
        file: usize,
        module: &ModuleInfo,
        file_facts: &mut FileFacts,
    ) {
        let modules = self.modules;
        // What was given stays while it holds: the file checked with it no longer asks.
        let mut asked: FxHashMap<&str, Option<Questions>> =
            applied[file].returns.keys().map(|spelled| (&**spelled, None)).collect();
        let what_is_it = Questions::of(Question::Kind);
        let passed_on_calls = wanted
            .calls
            .get(&file)
            .into_iter()
            .flatten()
            .map(|name| (*name, what_is_it));
        // Only what hot code calls can matter.
        let rules_asked = module
            .summary
            .imports
            .iter()
            .filter(|call| runs_hot(modules, hot, file, call.caller))
            .map(|call| (&*call.name, call.questions));
        for (name, questions) in rules_asked.chain(passed_on_calls) {
            if let Some(asked) = asked.entry(name).or_insert(Some(Questions::default())) {
                *asked = asked.union(questions);
            }
        }
        for (spelled, questions) in asked {
            if let Some(Resolved::Function(target)) = self.resolve_spelled(file, spelled) {
                let returns = self.returns_of(target, file);
                let passed_on = wanted.calls.get(&file).is_some_and(|calls| calls.contains(spelled));
                let questions = questions.map(|questions| narrowed_for_plain_tensor(questions, &returns, passed_on));
                if questions.is_none_or(|questions| questions.answered_by_returns(&returns)) {
                    file_facts.returns.insert(spelled.into(), returns);
                }
            }
        }
    }

    /// Tells `file` (of `module`) what its calls through objects return, by where they are:
    /// those a rule asked about in hot code, those made into a value passed on that is wanted
    /// where it goes, and those told before.
    pub(super) fn tell_results(
        &self,
        hot: &HotFunctions,
        applied: &[&FileFacts],
        wanted: &Wanted,
        file: usize,
        module: &ModuleInfo,
        file_facts: &mut FileFacts,
    ) {
        let modules = self.modules;
        let what_is_it = Questions::of(Question::Kind);
        // Calls through objects, by where they are: those a rule asked about in hot code,
        // and those told before (kept while they hold).
        for (index, site) in module.summary.call_sites.iter().enumerate() {
            let told = applied[file].results.contains_key(&site.at);
            // Asked by a rule in hot code, or made into a value passed on that is asked
            // about where it goes.
            let passed_on = wanted.sites.contains(&(file, index));
            let asked = if passed_on {
                site.result_asked.union(what_is_it)
            } else if matches!(site.context, HotContext::Hot(_))
                || site.caller.is_some_and(|caller| runs_hot(modules, hot, file, caller))
            {
                site.result_asked
            } else {
                Questions::default()
            };
            if !told && asked == Questions::default() {
                continue;
            }
            let targets = &self.targets[file][index].functions;
            if targets.is_empty() || matches!(site.callee, Callee::Local(_) | Callee::Imported { .. }) {
                continue;
            }
            let returns = targets
                .iter()
                .map(|&target| self.returns_of(target, file))
                .reduce(|a, b| a.join(&b))
                .unwrap_or_default();
            // One call may make several sites (overrides): they join.
            let joined = match file_facts.results.get(&site.at) {
                Some(earlier) => earlier.join(&returns),
                None => returns,
            };
            let seen = module.summary.result_seen(index).unwrap_or(&ProjectKind::UNKNOWN);
            let asked = narrowed_for_plain_tensor(asked, &joined, passed_on);
            if told || asked.answered_differently_by_returns(seen, &joined) {
                file_facts.results.insert(site.at, joined);
            }
        }
    }
}

/// The questions about a project call's result that `returns` can answer usefully. A rule
/// asking what a call's result is, where the file could not tell, learns nothing it acts on from
/// "a tensor, device and dtype unknown": rules that count an unknown value as maybe on a GPU ask
/// that narrower question instead. A value passed on is another matter: the function it reaches
/// may ask anything.
fn narrowed_for_plain_tensor(asked: Questions, returns: &ProjectReturns, passed_on: bool) -> Questions {
    let plain_tensor = returns.kind.kind == Kind::Tensor(TensorFacts::on(Device::Unknown));
    if plain_tensor && returns.tuple.is_none() && !passed_on {
        asked.without(Question::Kind)
    } else {
        asked
    }
}
