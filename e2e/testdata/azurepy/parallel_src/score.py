def init():
    pass


def run(mini_batch):
    return [str(f) for f in mini_batch]
