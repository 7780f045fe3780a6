"""Evaluation: everything that turns a trained model into metric rows."""
