-- What a journal row's batch owes the engine (DESIGN §20): follow-ups its
-- events called for (a lease its buyer's wallet could not fund, funds that
-- ran out). The write path runs one way, so they are not applied inside the
-- batch that found them; the next batch applies them first, as commands of
-- its own. Kept with the row, so a restarted or promoted leader owes what
-- the last one did. NULL: nothing owed.
ALTER TABLE journal ADD COLUMN owed TEXT;
