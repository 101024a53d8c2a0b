"""The one way to the model during explain (sklearn_cscf._engine._evaluator):
every state asked once, remembered per instance, counted once; the budget
measured on that count; and no other path of the engine calling the model."""

import ast
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import sklearn_cscf
from sklearn_cscf._engine._evaluator import Evaluator
from sklearn_cscf._engine._targets import make_target
from sklearn_cscf._schema import FeatureSchema


class Thresholded:
    """P(yes) is the first column; predict says "yes" from 0.8 on."""

    classes_ = np.array(["no", "yes"])

    def __init__(self):
        self.calls = []

    def predict_proba(self, X):
        self.calls.append(("predict_proba", len(X)))
        p = np.clip(np.asarray(X, dtype=float)[:, 0], 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        self.calls.append(("predict", len(X)))
        p = np.clip(np.asarray(X, dtype=float)[:, 0], 0.0, 1.0)
        return self.classes_[(p >= 0.8).astype(int)]


def states(*ps):
    return np.array([[p, 0.0] for p in ps])


def evaluator_of(model, n_instances, max_model_rows=None):
    """An evaluator of ``n_instances`` rows (``p = 0``, ``z = 0``) whose one
    action changes ``p``, deciding by ``predict``."""
    schema = FeatureSchema(pd.DataFrame({"p": [0.0, 0.5, 1.0], "z": [1.0, 2.0, 3.0]}))
    problem = SimpleNamespace(
        estimator=model,
        schema=schema,
        classes=Thresholded.classes_,
        use_predict=True,
        graph=SimpleNamespace(discounts=lambda x0: np.ones((len(x0), 1))),
        actions=[SimpleNamespace(affects=[0])],
        settings=SimpleNamespace(population_size=100),
        max_model_rows=max_model_rows,
        target=make_target(Thresholded.classes_, use_predict=True),
    )
    return Evaluator(problem, states(*[0.0] * n_instances), np.ones(n_instances))


def test_answers_sends_each_new_state_once_and_remembers_it():
    model = Thresholded()
    evaluator = evaluator_of(model, 2)
    # instance 0 asks two states, instance 1 one of them again and a new one
    owner = np.array([0, 0, 1, 1])
    batch = states(0.3, 0.9, 0.9, 0.5)
    answers = evaluator.answers(owner, batch)
    assert answers.decision.tolist() == [0, 1, 1, 0]
    # 0.9 is sent once, for the instance that reached it first
    assert model.calls == [("predict_proba", 3), ("predict", 3)]
    assert evaluator.asked.tolist() == [2, 2]
    assert evaluator.n_rows.tolist() == [2, 1]
    # each instance remembers its own states: 0.9 twice
    assert evaluator.memo.counts.tolist() == [2, 2]
    again = evaluator.answers(owner, batch)
    assert again.decision.tolist() == answers.decision.tolist()
    assert len(model.calls) == 2  # every state remembered: no new call
    assert evaluator.n_calls.tolist() == [1, 1]
    assert evaluator.asked.tolist() == [4, 4]
    # no state shared between the instances: instance 0 repeats one of its
    # own, remembered once
    third = evaluator.answers(owner, states(0.95, 0.95, 0.2, 0.9))
    assert third.decision.tolist() == [1, 1, 0, 1]
    assert model.calls[2:] == [("predict_proba", 2), ("predict", 2)]
    assert evaluator.memo.counts.tolist() == [3, 3]
    assert evaluator.n_rows.tolist() == [3, 2]
    # forgotten: the same states are asked afresh, and counted again
    evaluator.forget()
    evaluator.answers(owner, batch)
    assert model.calls[4:] == [("predict_proba", 3), ("predict", 3)]
    assert evaluator.n_calls.tolist() == [3, 3]


def test_a_call_holds_at_most_max_model_rows_states_and_counts_as_one():
    model = Thresholded()
    evaluator = evaluator_of(model, 2, max_model_rows=4)
    owner = np.repeat([0, 1], 5)
    found = evaluator.answers(owner, states(*np.linspace(0.05, 0.95, 10)))
    assert found.decision.tolist() == [0] * 8 + [1] * 2
    assert [rows for _, rows in model.calls] == [4, 4, 4, 4, 2, 2]
    # the answers of one request: one call each instance took part in
    assert evaluator.n_calls.tolist() == [1, 1]
    assert evaluator.n_rows.tolist() == [5, 5]
    verified = evaluator.verify(owner, states(*np.linspace(0.05, 0.95, 10)))
    assert verified.tolist() == found.decision.tolist()
    assert [rows for _, rows in model.calls[6:]] == [4, 4, 2]
    assert evaluator.n_calls.tolist() == [2, 2]
    # verifying remembers nothing and asks about nothing the budget counts
    assert evaluator.asked.tolist() == [5, 5]


def test_the_budget_is_measured_on_the_one_count_of_states_asked():
    evaluator = evaluator_of(Thresholded(), 3)
    evaluator.count_asked(np.array([0, 0, 2]))
    evaluator.limit_to([10, 4, 1])
    assert evaluator.left().tolist() == [10, 4, 1]
    # rows of each instance admitted while their estimates fit, in order
    owner = np.array([0, 0, 0, 1, 1, 2])
    admitted = evaluator.admit(owner, np.array([4, 5, 2, 4, 1, 1]))
    assert admitted.tolist() == [True, True, False, True, False, True]
    # asking (remembered or sent) and counting spend the same budget
    evaluator.answers(np.array([0, 0, 1]), states(0.1, 0.1, 0.2))
    evaluator.count_asked(np.array([1]))
    assert evaluator.asked.tolist() == [4, 2, 1]
    assert evaluator.left().tolist() == [8, 2, 1]
    assert not evaluator.admit(np.array([1]), 3)[0]


def test_only_the_model_module_calls_the_model_during_explain():
    # every call of predict or predict_proba in the engine and the driver
    # goes through the adapter of _engine/_model.py, which the evaluator owns
    package = Path(sklearn_cscf.__file__).parent
    callers = set()
    for path in [*(package / "_engine").rglob("*.py"), package / "_driver.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "attr", None) or getattr(node.func, "id", "")
                if name in {"predict", "predict_proba", "decision_function"}:
                    callers.add(path.relative_to(package).as_posix())
                # getattr(model, method)(X)
                inner = node.func
                if (
                    isinstance(inner, ast.Call)
                    and getattr(inner.func, "id", "") == "getattr"
                ):
                    callers.add(path.relative_to(package).as_posix())
    assert callers <= {"_engine/_model.py"}, callers


@pytest.mark.parametrize("n_instances", [1, 3])
def test_a_final_state_the_model_rejects_has_a_gap(n_instances):
    evaluator = evaluator_of(Thresholded(), n_instances)
    owner = np.repeat(np.arange(n_instances), 2)
    final = states(*[0.5, 0.9] * n_instances)
    gap = evaluator.gap(
        owner, final, np.zeros(owner.size, np.intp), np.ones(owner.size, np.intp)
    )
    assert (gap[::2] > 0).all() and (gap[1::2] == 0).all()
