"""The Dask worker backend: jobs run as tasks on a Dask cluster (`executor`), each task the
same worker entry as a remote host runs, its files and packs carried in the task (`task`)."""
