"""Plots of the tidy explanations frame (needs the ``plot`` extra: matplotlib).

- :func:`plot_target_probability`: the model's probability of the target class
  after each step of an instance's sequences.
- :func:`plot_pareto_front`: an instance's Pareto-optimal sequences by
  sequence cost and Gower distance.
"""

import numpy as np
import pandas as pd

__all__ = ["plot_pareto_front", "plot_target_probability"]

_REQUIRED = {"instance", "solution", "step", "action", "status"}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "Plotting needs matplotlib; install it with "
            "pip install 'sklearn-cscf[plot]'."
        ) from None
    return plt


def _instance_steps(explanations, instance, columns):
    """The ``status == "ok"`` rows of one instance, checked."""
    if not isinstance(explanations, pd.DataFrame):
        raise TypeError(
            "explanations must be the DataFrame returned by explain, got "
            f"{type(explanations).__name__}."
        )
    missing = (_REQUIRED | set(columns)) - set(explanations.columns)
    if missing:
        raise ValueError(
            f"explanations lacks the column(s) {sorted(missing)}; pass the "
            "DataFrame returned by SequentialCounterfactualExplainer.explain."
        )
    instances = explanations["instance"].unique().tolist()
    if instance is None:
        if len(instances) != 1:
            raise ValueError(
                f"explanations holds {len(instances)} instances; choose one with "
                f"instance=..., e.g. one of {instances[:5]}."
            )
        instance = instances[0]
    rows = explanations[explanations["instance"] == instance]
    if rows.empty:
        raise ValueError(
            f"instance {instance!r} is not in explanations; it holds "
            f"{instances[:5]}{' ...' if len(instances) > 5 else ''}."
        )
    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        raise ValueError(
            f"instance {instance!r} has no sequence to plot (status "
            f"{rows['status'].iloc[0]!r})."
        )
    return instance, ok


def plot_target_probability(
    explanations, instance=None, *, initial_proba=None, max_solutions=5, ax=None
):
    """Plot the target probability after each step of an instance's sequences.

    One line per sequence (the cheapest ``max_solutions``), from step 1 (or
    step 0, the instance itself, when ``initial_proba`` is given) to its last
    step, each point labelled with the step's action.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    instance : object, default=None
        The ``instance`` label to plot; may be omitted when the frame holds a
        single instance.
    initial_proba : float, default=None
        The model's probability of the target class for the instance itself
        (``predict_proba``); if given, every line starts from it at step 0.
    max_solutions : int, default=5
        Plot at most this many sequences, the cheapest first.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib Axes

    See Also
    --------
    plot_pareto_front : the sequences by cost and Gower distance.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_target_probability
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7], "solution": [0, 0, 1], "step": [1, 2, 1],
    ...     "action": ["study", "save", "move"], "target_proba": [0.3, 0.6, 0.55],
    ...     "sequence_cost": [2.0, 2.0, 3.0], "status": ["ok"] * 3,
    ... })
    >>> ax = plot_target_probability(frame, initial_proba=0.1)
    >>> [line.get_ydata().tolist() for line in ax.get_lines()]
    [[0.1, 0.3, 0.6], [0.1, 0.55]]
    """
    if not isinstance(max_solutions, int | np.integer) or max_solutions < 1:
        raise ValueError(
            f"max_solutions must be a positive integer, got {max_solutions!r}."
        )
    instance, steps = _instance_steps(
        explanations, instance, {"target_proba", "sequence_cost"}
    )
    if ax is None:
        ax = _pyplot().subplots()[1]
    solutions = sorted(steps["solution"].unique().tolist())[:max_solutions]
    for solution in solutions:
        seq = steps[steps["solution"] == solution].sort_values("step")
        x = seq["step"].to_numpy(dtype=float)
        y = seq["target_proba"].to_numpy(dtype=float)
        names = seq["action"].tolist()
        if initial_proba is not None:
            x, y = np.r_[0.0, x], np.r_[float(initial_proba), y]
            names = ["", *names]
        cost = seq["sequence_cost"].iloc[0]
        (line,) = ax.plot(
            x, y, marker="o", label=f"#{int(solution) + 1} (cost {cost:.2f})"
        )
        for xi, yi, name in zip(x, y, names):
            ax.annotate(
                name,
                (xi, yi),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize="x-small",
                color=line.get_color(),
            )
    ax.set_xlabel("step")
    ax.set_ylabel("target probability after the step")
    ax.set_ylim(-0.02, 1.02)
    first = 0 if initial_proba is not None else 1
    ax.set_xticks(range(first, int(steps["step"].max()) + 1))
    ax.set_title(f"Instance {instance}: target probability by step")
    ax.legend(fontsize="small")
    return ax


def plot_pareto_front(explanations, instance=None, *, ax=None):
    """Plot an instance's Pareto-optimal sequences by cost and Gower distance.

    One point per sequence, coloured by its number of steps and labelled with
    its rank by cost.

    Parameters
    ----------
    explanations : DataFrame
        The frame returned by
        :meth:`~sklearn_cscf.SequentialCounterfactualExplainer.explain`.
    instance : object, default=None
        The ``instance`` label to plot; may be omitted when the frame holds a
        single instance.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes if None.

    Returns
    -------
    ax : matplotlib Axes

    See Also
    --------
    plot_target_probability : the target probability along the sequences.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from sklearn_cscf.plotting import plot_pareto_front
    >>> frame = pd.DataFrame({
    ...     "instance": [7, 7, 7], "solution": [0, 0, 1], "step": [1, 2, 1],
    ...     "action": ["study", "save", "move"], "sequence_cost": [2.0, 2.0, 3.0],
    ...     "gower_distance": [0.2, 0.2, 0.1], "length": [2, 2, 1],
    ...     "status": ["ok"] * 3,
    ... })
    >>> ax = plot_pareto_front(frame)
    >>> ax.collections[0].get_offsets().tolist()
    [[2.0, 0.2], [3.0, 0.1]]
    """
    instance, steps = _instance_steps(
        explanations, instance, {"sequence_cost", "gower_distance", "length"}
    )
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    if ax is None:
        ax = plt.subplots()[1]
    front = steps.groupby("solution", sort=True).first()
    lengths = front["length"].to_numpy(dtype=float)
    points = ax.scatter(
        front["sequence_cost"].to_numpy(dtype=float),
        front["gower_distance"].to_numpy(dtype=float),
        c=lengths,
        cmap="viridis",
        vmin=1,
        vmax=max(lengths.max(), 2),
    )
    for solution, row in front.iterrows():
        ax.annotate(
            f"#{int(solution) + 1}",
            (row["sequence_cost"], row["gower_distance"]),
            textcoords="offset points",
            xytext=(4, 4),
            fontsize="x-small",
        )
    colorbar = ax.figure.colorbar(points, ax=ax, label="steps")
    colorbar.locator = MaxNLocator(integer=True)
    colorbar.update_ticks()
    ax.set_xlabel("sequence cost")
    ax.set_ylabel("Gower distance")
    ax.set_title(f"Instance {instance}: Pareto-optimal sequences")
    return ax
