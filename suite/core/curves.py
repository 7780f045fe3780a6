"""The names of a run's learning-curve figures that the stages share: the training stage writes
them (suite.training.learning_curve, with the task kinds' probes), the plan chooses a tuned
grid's learning rate on them (suite.plan.tuning) and the report shows them (suite.report)."""

from __future__ import annotations

# measured on examples no training batch holds: language modelling's validation split
# (suite.data.windows.ValidationLoss) and a generated task's held-out examples
# (suite.data.synthetic_train.HeldOutExactMatch); the first a curve has is its validation loss
VALIDATION_FIGURES = ("val_loss", "heldout_loss")
