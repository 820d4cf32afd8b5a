"""Content of the test split's binary documents; written by bench/qa/make_docs.py.
The test split is locked: scored only for the final report."""

from __future__ import annotations

from typing import Any

HEADPHONES = [
    ("h1", "Soundwave H7 Wireless Noise-Cancelling Headphones - User Manual"),
    ("p", "Thank you for buying the Soundwave H7. This manual covers the H7 (model number "
          "SW-H7, launched 2025). The older H5 has a separate quick start sheet."),
    ("h2", "In the box"),
    ("p", "H7 headphones, carry case, USB-C charging cable (1.2 m), 3.5 mm audio cable, "
          "flight adapter."),
    ("h2", "Specifications"),
    ("table", ["Specification", "Soundwave H7"], [
        ["Battery life (noise cancelling on)", "up to 40 hours"],
        ["Battery life (noise cancelling off)", "up to 55 hours"],
        ["Quick charge", "10 minutes gives 5 hours of playback"],
        ["Full charge", "2 hours, USB-C"],
        ["Weight", "254 g"],
        ["Bluetooth", "5.3, range 15 m"],
        ["Multipoint", "yes, two devices at once"],
        ["Codecs", "SBC, AAC, LDAC"],
        ["Drivers", "40 mm"],
        ["Colours", "midnight blue, sand, black"],
        ["Warranty", "2 years"],
    ]),
    ("page",),
    ("h2", "Getting started"),
    ("p", "Pairing: with the headphones off, hold the power button for 5 seconds until the "
          "light flashes blue. Open Bluetooth on your phone and choose 'Soundwave H7'. To "
          "pair a second device, repeat with the first device's Bluetooth switched off; the "
          "H7 then connects to both."),
    ("p", "Controls: tap the right ear cup twice to play or pause, swipe forward or back to "
          "change track, swipe up or down for volume. Press the ANC button once to cycle "
          "through noise cancelling, transparency mode and off. Wear detection pauses music "
          "when you take the headphones off."),
    ("p", "Factory reset: with the headphones switched on, hold the ANC button and the power "
          "button together for 12 seconds until the light flashes white three times. All "
          "pairings are deleted."),
    ("page",),
    ("h2", "Troubleshooting"),
    ("table", ["Problem", "Solution"], [
        ["No sound from one ear cup", "Check the balance setting in the Soundwave app, then "
                                      "reset the headphones"],
        ["Headphones will not pair", "Delete 'Soundwave H7' from your phone's Bluetooth list "
                                     "and pair again"],
        ["Light flashes red three times", "Battery low: charge for at least 15 minutes"],
        ["Crackling in noise cancelling mode", "Make sure the ear cushions are fitted and "
                                               "update the firmware in the app"],
        ["Headphones switch off by themselves", "Auto-off after 20 minutes without sound; "
                                                "change it in the app"],
    ]),
    ("h2", "Care and support"),
    ("p", "Replace the ear cushions every 12 to 18 months (spare set: part SW-H7-EC, £24). "
          "Do not charge the headphones below 0 C or above 35 C. Support: "
          "support.soundwave.example or 0330 088 2417, Monday to Friday 8am to 8pm."),
]

GOVERNORS = [
    ("h1", "Cedar Lane Primary School - Full Governing Board"),
    ("p", "Minutes of the meeting held on 14 May 2026 at 6pm in the school library."),
    ("p", "Present: Ruth Achterberg (chair), Jamal Fennick (vice-chair), Olu Bamidele "
          "(headteacher), Karen Liddle, Martin Shaw, Aisha Noor. Apologies: Ben Castell. "
          "Clerk: Patricia Dunn."),
    ("h2", "1. Headteacher's report"),
    ("p", "Olu Bamidele reported that the school has 412 pupils on roll. Attendance this "
          "term was 95.1%, up from 93.8% in the spring term. Persistent absence fell to 11%."),
    ("h2", "2. Budget"),
    ("p", "The board approved the 2026/27 budget of £2.31 million. A deficit of £38,000 is "
          "expected, to be covered from reserves, which will fall to £96,000."),
    ("h2", "3. Playground"),
    ("p", "The board agreed to resurface the junior playground over the summer holidays "
          "for £27,500, funded by the PTA (£10,000) and the capital grant (£17,500)."),
    ("h2", "4. School day"),
    ("p", "From September 2026 the school day will start at 8:45am instead of 8:50am and end "
          "at 3:20pm, to meet the 32.5-hour week. Parents will be told by 1 June."),
    ("h2", "5. Policies"),
    ("p", "The board approved the updated behaviour policy and the new mobile phone policy: "
          "pupils who walk home alone may bring a phone, which is handed in at the office "
          "each morning."),
    ("h2", "Actions"),
    ("table", ["Action", "Owner", "Due"], [
        ["Letter to parents about the new school day", "Olu Bamidele", "1 June 2026"],
        ["Appoint the playground contractor", "Martin Shaw", "19 June 2026"],
        ["Publish the new policies on the website", "Patricia Dunn", "29 May 2026"],
        ["Review the staffing structure", "Jamal Fennick", "9 July 2026"],
    ]),
    ("p", "Date of next meeting: 9 July 2026."),
]

WATER = [
    ("Harlow Water - Performance Report 2025/26",
     ["Board meeting, 12 May 2026", "Presented by Dr Sunita Varga, Director of Operations"],
     "Good evening. This year we met four of our eight regional targets."),
    ("Leakage (megalitres a day)",
     ["North: 36.5 (target 38.0)", "South: 31.8 (target 31.0)"],
     "Leakage is the measure the regulator watches most closely. North's improvement "
     "comes from the 2,400 smart meters fitted in Harlow town. South missed its target "
     "after the burst main at Kestle Bridge in January."),
    ("Supply interruptions (minutes per property)",
     ["North: 9.4 (target 10.0)", "South: 12.6 (target 10.0)"],
     "The Kestle Bridge burst alone added about 4 minutes to the South figure."),
    ("Customer satisfaction (out of 5)",
     ["North: 4.2 (target 4.3)", "South: 4.5 (target 4.3)"],
     "South's satisfaction score is our best ever."),
    ("Pollution incidents",
     ["North: 11 (target 12)", "South: 15 (target 12)"],
     "Most South incidents were storm overflows in February."),
    ("Next year",
     ["Invest £84 million in mains renewal", "Fit 10,000 more smart meters",
      "Open a new treatment works at Ashcombe in 2027"],
     "The Ashcombe works will serve 60,000 homes."),
]

CLINICS: dict[str, list[list[Any]]] = {
    "Clinics": [
        ["Clinic", "Day", "Time", "Who runs it", "Book by"],
        ["Baby clinic", "Tuesday", "9:30-11:30", "Health visitors", "drop in"],
        ["Asthma review", "Wednesday", "14:00-17:00", "Nurse Carol Vance", "phone"],
        ["Diabetes clinic", "Thursday", "9:00-12:00", "Dr Imran Qureshi", "phone"],
        ["Travel vaccinations", "Monday", "13:30-16:30", "Nurse Carol Vance", "online"],
        ["Blood tests", "Monday to Friday", "8:00-10:30", "Phlebotomist", "online"],
        ["Minor surgery", "Friday", "14:00-16:00", "Dr Hannah Oyelaran", "referral"],
    ],
    "Private fees": [
        ["Service", "Fee"],
        ["Private sick note (first 7 days)", "£20"],
        ["Driving licence medical (HGV)", "£120"],
        ["Insurance claim form", "£45"],
        ["Yellow fever vaccine", "£75"],
        ["Rabies vaccine (course of 3)", "£195"],
        ["Copy of medical records (printed)", "£10"],
        ["Fitness to travel letter", "£35"],
    ],
}

DOCS: dict[str, tuple[str, Any]] = {
    "soundwave-h7-headphones-manual.pdf": ("pdf", HEADPHONES),
    "cedar-lane-governors-minutes-2026-05.docx": ("docx", GOVERNORS),
    "harlow-water-performance-2025-26.pptx": ("pptx", WATER),
    "millbrook-medical-centre.xlsx": ("xlsx", CLINICS),
}
