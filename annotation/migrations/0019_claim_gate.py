"""PostgreSQL: the function by which one worker's claims at once take one task.

A claim is one statement, and a statement cannot see what another one commits after it
began: two claims of one worker at once (tabs, a script) each found no live task and each
took one. ``crowdqa_claim_gate`` takes a lock of the worker for the rest of the claim's
transaction and then looks for a live task in a fresh snapshot (a VOLATILE function's
statements each take one), so the second claim waits for the first and finds its task.
SQLite runs a claim in one IMMEDIATE transaction instead (``annotation.engine``).
"""

from django.db import migrations

GATE = """
CREATE OR REPLACE FUNCTION crowdqa_claim_gate(
    worker bigint, at timestamptz, project bigint, kinds text[]
) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({lock_class}, mod(worker, 2147483647)::int);
    RETURN NOT EXISTS (
        SELECT 1 FROM annotation_assignment a JOIN annotation_stage s ON s.id = a.stage_id
        WHERE a.worker_id = worker AND a.status = 'active' AND a.lease_expires_at > at
        AND (project IS NULL OR s.project_id = project)
        AND (kinds IS NULL OR s.kind = ANY (kinds)));
END
$$
"""

#: The first key of the gate's advisory locks ("CQAG"), apart from other uses' keys.
LOCK_CLASS = 0x43514147


def gate_create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(GATE.format(lock_class=LOCK_CLASS))


def gate_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "DROP FUNCTION IF EXISTS crowdqa_claim_gate(bigint, timestamptz, bigint, text[])")


class Migration(migrations.Migration):
    dependencies = [("annotation", "0018_invite_mail")]

    operations = [migrations.RunPython(gate_create, gate_drop)]
