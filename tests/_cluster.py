"""A Dask cluster for the tests: worker processes on loopback, one thread
each, no dashboard."""


def loopback_cluster(n_workers):
    """A ``distributed.LocalCluster`` of ``n_workers`` worker processes on
    127.0.0.1, one thread each, without a dashboard (``distributed`` is
    imported here: a test without it skips before calling this)."""
    import distributed

    return distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
