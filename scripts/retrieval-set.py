#!/usr/bin/env python3
"""Write benches/data/retrieval/distractors.txt: 10 000 everyday notes that crowd the targets.

The retrieval set (benches/data/retrieval/) measures whether a memory is found again among a
year or three of ordinary notes: targets.tsv holds the notes to find, questions.tsv paraphrases
of what a user would ask for them, and this file the notes around them. The distractors are what
real notes are like: the same people, errands and places week after week, near-copies of one
another, and the targets' topics (the doctor, the bills, the conference, the talk) without the
targets' facts, so that no distractor answers a question.

Seeded: running it again writes the same file. Run it only to change the set, then commit both.
    python3 scripts/retrieval-set.py [--out FILE]
(tests/it/retrieval_set.rs checks that the committed file is what this writes.)
"""
import pathlib
import random
import sys

PEOPLE = ["Luis", "Maya", "Priya", "Tom", "Anna", "Sara", "Ben", "Noah", "Marco", "Elena",
          "Jonas", "Kofi", "Lena", "Hannah", "Olivia", "Ravi", "Yuki", "Clara", "Mum", "Dad",
          "Grandma", "Grandpa", "my sister", "the landlord", "my manager", "Dr. Okafor"]
FRIENDS = PEOPLE[:18]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WHEN = ["today", "tomorrow", "this week", "next week", "on " + "{day}", "this weekend",
        "tonight", "before the weekend", "after work", "in the morning"]
SHOPS = ["the supermarket", "the pharmacy", "the bakery", "the hardware store", "the market",
         "the post office", "the garden centre", "the corner shop", "the bookshop"]
GROCERIES = ["milk", "eggs", "bread", "coffee", "oat milk", "tomatoes", "rice", "apples",
             "olive oil", "cheese", "bananas", "yoghurt", "pasta", "onions", "lemons",
             "dish soap", "toilet paper", "batteries", "light bulbs", "bin bags", "butter"]
PLACES = ["Lisbon", "Porto", "Berlin", "Madrid", "Vienna", "Prague", "Copenhagen", "Milan",
          "Edinburgh", "Zürich", "Montreal", "Tokyo", "Accra", "Amsterdam"]
EVENTS = ["conference", "workshop", "meetup", "trade fair", "summit", "festival"]
TOPICS = ["networking", "the food", "the hotel", "the city", "the workshops", "the weather",
          "the venue", "the people", "the museum", "the old town"]
MEALS = ["lasagne", "curry", "soup", "risotto", "tacos", "stir fry", "chili", "pancakes",
         "salad", "fish pie", "roast chicken", "dumplings"]
CHORES = ["vacuum the living room", "clean the fridge", "take out the recycling",
          "change the bed sheets", "descale the kettle", "sort the laundry",
          "wipe the windows", "water the balcony plants", "empty the dishwasher",
          "sweep the stairs", "defrost the freezer", "fold the washing"]
WORK = ["the sprint review", "the design review", "the all-hands", "the one-on-one",
        "the client call", "the planning meeting", "the retro", "the hiring panel",
        "the roadmap session", "the budget call", "the standup"]
WORK_NOTES = ["ran long", "was moved to the afternoon", "was cancelled", "went well",
              "needs a follow-up", "had no agenda", "was mostly about deadlines",
              "ended early", "was recorded for the others"]
BILLS = ["the phone bill", "the water bill", "the internet bill", "the gas bill",
         "the council tax", "the car insurance", "the streaming subscription", "the gym fee"]
HEALTH = ["a headache", "a sore throat", "a stiff neck", "back pain", "a runny nose",
          "trouble sleeping", "a cough", "tired legs"]
EXERCISE = ["ran 5 km", "went for a long walk", "did yoga", "cycled to work", "did 20 push-ups",
            "went swimming", "stretched for ten minutes", "hiked up the hill"]
MOODS = ["tired", "happy", "stressed", "calm", "restless", "grateful", "distracted", "proud"]
BOOKS = ["a thriller", "a biography", "a cookbook", "a history of Rome", "a poetry collection",
         "a book about habits", "a science fiction novel", "a travel guide"]
FILMS = ["a documentary", "an old western", "a comedy", "a detective series", "a cartoon",
         "a cooking show", "a nature film"]
CAR = ["the oil change", "the car wash", "the MOT", "a new wiper blade", "the tyre pressure",
       "the parking permit", "the dent in the door", "a full tank"]
HOUSE = ["the kitchen tap drips", "the hallway light flickers", "the door handle is loose",
         "the shower drain is slow", "the window in the study sticks",
         "the fence needs paint", "the smoke alarm beeps", "the gutter is full of leaves"]
KIDS = ["football practice", "the piano lesson", "a birthday party", "the dentist check-up",
        "the school play", "homework club", "a sleepover", "the library visit"]
TAX_JOBS = ["scan the receipts", "find last year's return", "ask the accountant about the deadline",
            "sort the invoices"]
AMOUNTS = ["12", "25", "40", "60", "75", "90", "120", "150", "200", "35", "18", "45"]


def note(r: random.Random) -> str:
    day = r.choice(DAYS)
    when = r.choice(WHEN).replace("{day}", day)
    p, q = r.sample(FRIENDS, 2)
    templates = [
        lambda: f"Buy {r.choice(GROCERIES)} and {r.choice(GROCERIES)} at {r.choice(SHOPS)} {when}.",
        lambda: f"Pick up {r.choice(GROCERIES)} on the way home {when}.",
        lambda: f"We are out of {r.choice(GROCERIES)} again.",
        lambda: f"Call {p} {when} about {r.choice(['the weekend', 'dinner', 'the trip', 'the party', 'work', 'the kids'])}.",
        lambda: f"{p} recommended {r.choice(['the restaurant', 'a hotel', 'the museum', 'a bar', 'the market'])} in {r.choice(PLACES)}.",
        lambda: f"{p} is flying to {r.choice(PLACES)} for a {r.choice(EVENTS)} {when}.",
        lambda: f"{p} said the {r.choice(EVENTS)} in {r.choice(PLACES)} was great for {r.choice(TOPICS)}.",
        lambda: f"Luis recommended the {r.choice(EVENTS)} in Lisbon for {r.choice(TOPICS)}.",
        lambda: f"Cook {r.choice(MEALS)} {when}; {p} is coming over.",
        lambda: f"Dinner was {r.choice(MEALS)}, {r.choice(['too salty', 'really good', 'a bit bland', 'a hit with the kids', 'better than last time'])}.",
        lambda: f"Remember to {r.choice(CHORES)} {when}.",
        lambda: f"{r.choice(WORK).capitalize()} {r.choice(WORK_NOTES)}.",
        lambda: f"Prepare slides for {r.choice(WORK)} on {day}.",
        lambda: f"{p} wants to move {r.choice(WORK)} to {day}.",
        lambda: f"Paid {r.choice(BILLS)}, {r.choice(AMOUNTS)} euros.",
        lambda: f"{r.choice(BILLS).capitalize()} is due on {day}.",
        lambda: f"Check whether {r.choice(BILLS)} went up again.",
        lambda: f"Woke up with {r.choice(HEALTH)}.",
        lambda: f"{r.choice(HEALTH).capitalize()} again {when}, drink more water.",
        lambda: f"Dr. Okafor's office {r.choice(['is closed on ' + day, 'moved to the second floor', 'has a new receptionist', 'sent a reminder about the flu jab', 'changed its phone hours'])}.",
        lambda: f"Book a check-up with Dr. Okafor {when}.",
        lambda: f"Took the {r.choice(['vitamin D', 'iron tablets', 'allergy pills', 'painkillers'])} {r.choice(['this morning', 'with breakfast', 'before bed'])}.",
        lambda: f"{r.choice(EXERCISE).capitalize()} {r.choice(['this morning', 'after work', 'at lunch', 'before dinner'])}, felt {r.choice(MOODS)}.",
        lambda: f"Feeling {r.choice(MOODS)} {when}.",
        lambda: f"Started reading {r.choice(BOOKS)} that {p} lent me.",
        lambda: f"{p} recommended {r.choice(BOOKS)}.",
        lambda: f"Watched {r.choice(FILMS)} with {p}.",
        lambda: f"The car needs {r.choice(CAR)} {when}.",
        lambda: f"Sort out {r.choice(CAR)} at the garage on {day}.",
        lambda: f"Noticed {r.choice(HOUSE)}; ask the landlord.",
        lambda: f"Fix it: {r.choice(HOUSE)}.",
        lambda: f"{r.choice(['Ben', 'Noah'])} has {r.choice(KIDS)} on {day}.",
        lambda: f"Drive {r.choice(['Ben', 'Noah'])} to {r.choice(KIDS)} {when}.",
        lambda: f"Text {p} happy birthday {when}.",
        lambda: f"{p} and {q} are coming for dinner on {day}.",
        lambda: f"Lunch with {p} at {r.choice(['the Thai place', 'the canteen', 'the café on the corner', 'the new burger bar', 'the park'])}.",
        lambda: f"Meeting {p} {when} at {r.choice(['the station', 'the office', 'the gym', 'the café', 'the library'])}.",
        lambda: f"Transfer {r.choice(AMOUNTS)} euros to {p} for {r.choice(['dinner', 'the taxi', 'the gift', 'the tickets', 'groceries'])}.",
        lambda: f"Idea for the talk: {r.choice(['fewer slides', 'a joke about printers', 'one chart per point', 'a question to the audience', 'less text on the slides'])}.",
        lambda: f"The presentation for {r.choice(WORK)} needs {r.choice(['a summary slide', 'better charts', 'the latest numbers', 'a shorter intro'])}.",
        lambda: f"Tax documents: {r.choice(TAX_JOBS)} {when}.",
        lambda: f"Complained to {p} about the quarterly taxes {when}.",
        lambda: f"Weather {when}: {r.choice(['rain all day', 'sunny and cold', 'windy', 'snow expected', 'warm'])}.",
        lambda: f"The dog {r.choice(['needs a walk', 'ate a sock', 'needs its flea treatment', 'was muddy after the park', 'barked at the postman'])} {when}.",
        lambda: f"Take Biscuit to the park {when}.",
        lambda: f"The bus was late {when}, {r.choice(['twenty minutes', 'again', 'half an hour', 'ten minutes'])}.",
        lambda: f"Return the library books {when}.",
        lambda: f"Order {r.choice(['printer ink', 'a phone case', 'new headphones', 'a birthday present for ' + p, 'a rain jacket', 'running shoes'])} online.",
        lambda: f"The plumber {r.choice(['cancelled', 'is running late', 'sent the invoice', 'fixed the kitchen sink'])} {when}.",
        lambda: f"Garden: {r.choice(['mow the lawn', 'cut back the roses', 'rake the leaves', 'water the tomatoes', 'weed the beds'])} {when}.",
        lambda: f"{p}'s flight {r.choice(['was delayed', 'got cancelled', 'landed early', 'is on time'])}.",
        lambda: f"Book the train to {r.choice(PLACES)} for {day}.",
        lambda: f"Mum called about {r.choice(['Christmas', 'her knee', 'the neighbours', 'the garden', 'her choir concert', 'Grandpa'])}.",
    ]
    return r.choice(templates)()


def main() -> None:
    count = 10_000
    r = random.Random(20261206)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        line = note(r)
        if line not in seen:
            seen.add(line)
            out.append(line)
    path = pathlib.Path(__file__).resolve().parent.parent / "benches/data/retrieval/distractors.txt"
    if sys.argv[1:2] == ["--out"] and len(sys.argv) == 3:
        path = pathlib.Path(sys.argv[2])
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"{path}: {len(out)} notes")


if __name__ == "__main__":
    main()
