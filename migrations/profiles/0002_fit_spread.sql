-- The spread of ln e around the fitted f(d) = a·d^b (Dart eq. 9's error term): how much reduces
-- of one input size differ. The last of R reduces ends at the largest of R such draws.
-- Fits stored before this migration are refitted with their next sample; until then 0.
ALTER TABLE fits ADD COLUMN spread REAL NOT NULL DEFAULT 0;
