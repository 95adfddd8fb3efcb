-- Where each server sharing the store takes agents' calls (its
-- advertise_url, else its listener's URL): agents learn every server's
-- URL from the one they reach, and move to another when theirs stops
-- answering, without a load balancer in front (issue 27). Empty for a
-- server that reported before this column existed.
ALTER TABLE replicas ADD COLUMN url TEXT NOT NULL DEFAULT '';
