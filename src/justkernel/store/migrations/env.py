"""Alembic environment: migrations always run on a connection handed in by `store.migrate`."""

from alembic import context

from justkernel.store.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
