"""Grounded answers: a question the templates do not take, answered by the model through tools the
box runs (:mod:`.tools`), checked against what the tools returned (:mod:`.check`); what the box cannot
know or do gets an honest sentence (:mod:`.scope`). :class:`.answer.GroundedAnswerer` runs a turn."""
