# Cases for the sync oracle (fourth batch, synclint's own): the sampling that the policy-gradient
# script of bench/fix_effect still syncs on after `--fix --unsafe-fixes`, and its rewrites. Each
# case is (name, setup, stmt); COMMON runs before every setup. The oracle queues 30 ms of GPU
# work (torch.cuda._sleep), runs stmt and times how long the host is blocked inside it; it also
# counts torch.cuda.set_sync_debug_mode("warn") warnings.
COMMON = """
import torch
dev = torch.device('cuda')
mu = torch.randn(256, 4, device=dev)
sd = torch.rand(256, 4, device=dev) + 0.1
"""

_SAME = ("torch.manual_seed(1); a = {first}; torch.manual_seed(1); b = {second}; "
         "assert torch.equal(a, b), 'different values'")

CASES = [
    ("torch.normal(tensor, tensor)", "", "v = torch.normal(mu, sd)"),
    ("torch.normal(tensor, float)", "", "v = torch.normal(mu, 1.0)"),
    ("torch.normal(float, tensor)", "", "v = torch.normal(0.0, sd)"),
    ("Normal no validate sample", "d = torch.distributions.Normal(mu, sd, validate_args=False)", "v = d.sample()"),
    ("Normal no validate rsample", "d = torch.distributions.Normal(mu, sd, validate_args=False)", "v = d.rsample()"),
    ("mu + sd * randn_like", "", "v = mu + sd * torch.randn_like(mu)"),
    ("normal_ in place", "", "v = torch.empty_like(mu).normal_() * sd + mu"),
    ("sample == rsample values", "d = torch.distributions.Normal(mu, sd, validate_args=False)",
     _SAME.format(first="d.sample()", second="d.rsample().detach()")),
    ("normal(mu, sd) == mu + sd * randn_like values", "",
     _SAME.format(first="torch.normal(mu, sd)", second="mu + sd * torch.randn_like(mu)")),
]
