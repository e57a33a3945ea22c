"""Detection training: anchors matched to each image's boxes by IoU, per-image boolean masks of
positive anchors, and losses normalised by the number of positives."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def box_iou(a, b):
    top_left = torch.max(a[:, None, :2], b[None, :, :2])
    bottom_right = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (bottom_right - top_left).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a[:, None] + area_b[None, :] - inter)


class Head(nn.Module):
    def __init__(self, features, anchors):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(features, 256), nn.ReLU())
        self.score = nn.Linear(256, anchors)
        self.delta = nn.Linear(256, anchors * 4)

    def forward(self, x):
        h = self.trunk(x)
        return self.score(h), self.delta(h).view(x.shape[0], -1, 4)


def detection_loss(scores, deltas, anchors, boxes, threshold=0.5):
    iou = box_iou(anchors, boxes)
    best, match = iou.max(dim=1)
    positive = best > threshold
    cls_loss = F.binary_cross_entropy_with_logits(scores, positive.float())
    num_pos = max(positive.sum().item(), 1)
    targets = boxes[match] - anchors
    box_loss = F.smooth_l1_loss(deltas[positive], targets[positive], reduction="sum") / num_pos
    return cls_loss + box_loss


def main(steps, device="cuda"):
    torch.manual_seed(0)
    n_anchors, features, batch = 512, 64, 4
    head = Head(features, n_anchors).to(device)
    opt = torch.optim.SGD(head.parameters(), lr=0.01)
    corner = torch.rand(n_anchors, 2, device=device) * 0.8
    anchors = torch.cat([corner, corner + 0.2], dim=1)
    history = []
    for step in range(steps):
        x = torch.randn(batch, features, device=device)
        scores, deltas = head(x)
        loss = 0.0
        for i in range(batch):
            start = torch.rand(6, 2, device=device) * 0.7
            boxes = torch.cat([start, start + 0.1 + 0.2 * torch.rand(6, 2, device=device)], dim=1)
            loss = loss + detection_loss(scores[i], deltas[i], anchors, boxes)
        loss = loss / batch
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        history.append(loss.detach())
    return history, head
