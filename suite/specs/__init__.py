"""YAML -> frozen, validated spec objects.

Every problem is reported as ``file:line: field: message``; all problems of a load
are collected and raised together as one :class:`SpecErrors`, before anything is
trained or written. Unknown keys are errors with a did-you-mean.

Spec kinds and where they live (relative to the project root):

* ``encodings/<name>.yaml`` -> :class:`EncodingSpec` (its ``params`` are checked
  against the implementation's own frozen parameter dataclass)
* ``sizes/<name>.yaml``     -> :class:`SizeSpec`
* ``tasks/<name>.yaml``     -> :class:`TaskSpec`
* ``grids/<name>.yaml``     -> :class:`GridSpec`, which names the others

Loading never runs code from outside the package when imports are off
(:func:`suite.core.registry.no_imports`, what ``posbench validate`` does without
``--import``): an external ``impl:`` is then checked for its form and that its file
exists, and its params are left for ``--import`` to check. Every number is bounded
(no NaN or infinity, integers within what torch and the store can hold, sizes within
what a machine could train), and a spec refers only to files inside its project
unless it gives an absolute path.
"""

from __future__ import annotations

from suite.core.yamldoc import SpecError, SpecErrors, YamlDoc, read_yaml
from suite.specs.base import Spec, MAX_SEED, MAX_WIDTH, MAX_LAYERS, MAX_LENGTH, MAX_STEPS, MAX_BATCH, MAX_SCALE, MAX_TOKENS
from suite.specs.encoding import Conformance, EncodingSpec, check_params, spec_project_root, check_impl_form, check_implementation, load_encoding
from suite.specs.tasks import SizeSpec, CorpusSpec, TaskSpec, load_size, load_task
from suite.specs.recipes import TrainRecipe, EvalRecipe, glue_task_names, GlueRecipe, EvaluationEntry, ExtensionSpec
from suite.specs.grid import GridSpec, SPEC_NAME, Project, Grid, load_grid, load_trained_as, fine_tuned_spec, validate_path

__all__ = ['Conformance', 'CorpusSpec', 'EncodingSpec', 'EvalRecipe', 'EvaluationEntry', 'ExtensionSpec', 'GlueRecipe', 'Grid', 'GridSpec', 'MAX_BATCH', 'MAX_LAYERS', 'MAX_LENGTH', 'MAX_SCALE', 'MAX_SEED', 'MAX_STEPS', 'MAX_TOKENS', 'MAX_WIDTH', 'Project', 'SPEC_NAME', 'SizeSpec', 'Spec', 'SpecError', 'SpecErrors', 'TaskSpec', 'TrainRecipe', 'YamlDoc', 'check_impl_form', 'check_implementation', 'check_params', 'fine_tuned_spec', 'glue_task_names', 'load_encoding', 'load_grid', 'load_size', 'load_task', 'load_trained_as', 'read_yaml', 'spec_project_root', 'validate_path']
