"""Inline SVG plots for the site (matplotlib, no external assets)."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update({"svg.fonttype": "path", "svg.hashsalt": "posbench", "font.size": 9, "axes.spines.top": False,
                     "axes.spines.right": False})


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: it is inlined in HTML


def loss_vs_position(series: dict[str, list[tuple[float, float]]], train_len: int, title: str) -> str:
    """One line per label of (position, bits) points, with the training length marked."""
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for label, points in series.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker=".", linewidth=1.2, label=label)
    ax.axvline(train_len, color="grey", linestyle="--", linewidth=0.8)
    ax.annotate("train length", (train_len, ax.get_ylim()[1]), fontsize=7, color="grey", ha="left", va="top")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("position (bytes)")
    ax.set_ylabel("bits per byte")
    ax.set_title(title)
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def metric_vs_scale(series: dict[str, list[tuple[float, float]]], ylabel: str, title: str) -> str:
    fig, ax = plt.subplots(figsize=(4.8, 3.2))
    for label, points in series.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", linewidth=1.2, label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("eval scale s (eval length = s x train length)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, frameon=False)
    return _svg(fig)


def scatter(points: dict[str, tuple[float, float]], xlabel: str, ylabel: str, title: str) -> str:
    """Labelled points."""
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    for label, (x, y) in points.items():
        ax.scatter([x], [y], s=18)
        ax.annotate(label, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return _svg(fig)
