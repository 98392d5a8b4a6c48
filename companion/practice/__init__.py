"""Practice mode: train a slap on the pad against a virtual pile, with history and plots."""
