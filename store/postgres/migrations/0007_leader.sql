-- Leases of the roles one server of several holds at a time (the
-- controllers: name 'controllers'). token grows by one with every new
-- term; times are the database's clock, in unix microseconds, so that the
-- servers' clocks need not agree.
CREATE TABLE leader_lease (
    name    TEXT COLLATE "C" PRIMARY KEY,
    holder  TEXT COLLATE "C" NOT NULL,
    token   BIGINT NOT NULL,
    expires BIGINT NOT NULL,
    renewed BIGINT NOT NULL
);
