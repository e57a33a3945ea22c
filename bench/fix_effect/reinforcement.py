"""Policy-gradient training: observations whitened through a Cholesky factor, a Gaussian
policy, and gradient clipping that checks the norm is finite."""
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.mean = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, act_dim))
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs):
        return self.mean(obs), self.log_std.exp()


def main(steps, device="cuda"):
    torch.manual_seed(0)
    obs_dim, act_dim, batch = 16, 4, 256
    policy = Policy(obs_dim, act_dim).to(device)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    eye = torch.eye(obs_dim, device=device)
    history = []
    for step in range(steps):
        obs = torch.randn(batch, obs_dim, device=device)
        cov = obs.T @ obs / batch + 1e-3 * eye
        chol = torch.linalg.cholesky(cov)
        white = torch.linalg.solve_triangular(chol, obs.T, upper=False).T
        mean, std = policy(white)
        dist = torch.distributions.Normal(mean, std)
        actions = dist.sample()
        rewards = -(actions**2).sum(-1)
        advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-8)
        loss = -(dist.log_prob(actions).sum(-1) * advantages).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5, error_if_nonfinite=True)
        opt.step()
        history.append(loss.detach())
    return history, policy
