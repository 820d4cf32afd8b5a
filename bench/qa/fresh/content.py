"""Content of the fresh split's binary documents (batch d); written by bench/qa/make_docs.py."""

from __future__ import annotations

from typing import Any

SCOOTER = [
    ("h1", "Zipmo S9 Electric Scooter - User Manual"),
    ("p", "Model S9 (2025 edition). Thank you for choosing Zipmo. Please read this manual "
          "before your first ride and keep it for future reference. This manual covers the "
          "S9 only; the earlier S7 has its own quick guide and different error codes."),
    ("h2", "Important safety and legal information"),
    ("p", "Always wear a helmet. Do not carry passengers: the S9 is for one rider only. Do "
          "not ride in heavy rain, through standing water deeper than 2 cm, or on ice. In "
          "the UK, privately owned e-scooters may only be ridden on private land with the "
          "landowner's permission; they may not be used on public roads, pavements or cycle "
          "lanes. The minimum rider age is 14."),
    ("h2", "Specifications"),
    ("table", ["Feature", "Zipmo S9"], [
        ["Top speed", "25 km/h (15.5 mph)"],
        ["Range", "up to 45 km (28 miles) in Eco mode"],
        ["Battery", "36 V, 12.8 Ah (461 Wh) lithium-ion"],
        ["Motor", "350 W rear hub motor (700 W peak)"],
        ["Charging time", "6 to 7 hours"],
        ["Charger", "42 V, 2 A"],
        ["Weight", "17.4 kg"],
        ["Maximum rider weight", "120 kg"],
        ["Tyres", "10-inch tubeless pneumatic"],
        ["Brakes", "front drum brake and rear electronic regenerative brake (E-ABS)"],
        ["Hill climbing", "up to 18%"],
        ["Water resistance", "IPX5"],
        ["Folded size", "112 x 48 x 52 cm"],
        ["Lights", "2.5 W LED headlight, rear brake light"],
        ["Colours", "midnight black, glacier grey"],
        ["Warranty", "2 years on frame and motor, 1 year on battery and charger"],
    ]),
    ("page",),
    ("h2", "Before your first ride"),
    ("p", "Charge the battery fully before the first ride; this takes about 7 hours. Check "
          "that the tyres are inflated to 50 psi (3.5 bar). To unfold the scooter: 1. Unhook "
          "the bell from the rear mudguard hook. 2. Lift the stem until it is upright. 3. "
          "Close the folding lever until it clicks and push the safety catch across. 4. Lift "
          "the handlebar grips until they lock."),
    ("p", "To fold the scooter: 1. Switch it off. 2. Push the safety catch back and open the "
          "folding lever. 3. Lower the stem to the deck. 4. Hook the bell onto the rear "
          "mudguard hook so the stem cannot swing open while you carry it."),
    ("h2", "Riding modes"),
    ("p", "The S9 has three riding modes: Eco (top speed 15 km/h, longest range), Drive (20 "
          "km/h) and Sport (25 km/h). Double-press the power button to change mode; the "
          "mode is shown on the dashboard as E, D or S. The scooter always starts in Drive. "
          "Cruise control is off by default: switch it on in the Zipmo app, then hold the "
          "throttle steady for 5 seconds. Touching either brake switches cruise control off."),
    ("h2", "Charging and storage"),
    ("p", "The charging port is under a rubber cover on the left side of the stem. The light "
          "on the charger is red while charging and turns green when the battery is full. "
          "Only charge between 0 C and 40 C and never leave the scooter charging overnight "
          "unattended. If you will not ride for more than a month, store the scooter at 50 "
          "to 70% charge and top it up every 30 days; a battery left completely flat may not "
          "recover and is not covered by the warranty."),
    ("page",),
    ("h2", "Troubleshooting and error codes"),
    ("table", ["Code or problem", "Meaning", "What to do"], [
        ["E10", "Communication error between dashboard and controller",
         "Switch off, check the cable at the base of the stem, switch on again"],
        ["E14", "Throttle fault", "Do not press the throttle while switching on; if it "
         "stays, contact support"],
        ["E21", "Battery voltage too low", "Charge the battery fully"],
        ["E30", "Motor hall sensor fault", "Stop riding and contact support"],
        ["E45", "Brake sensor fault", "Check that the brake lever springs back fully"],
        ["Scooter will not switch on", "Battery completely flat",
         "Charge for at least 30 minutes, then try again"],
        ["Range much shorter than usual", "Tyres under-inflated or cold weather",
         "Inflate the tyres to 50 psi; expect about 20% less range below 5 C"],
        ["Front brake squeals", "Drum brake needs adjusting",
         "Turn the barrel adjuster on the brake lever half a turn"],
    ]),
    ("h2", "Maintenance"),
    ("p", "Every week: check the tyre pressure (50 psi). Every 100 km: check that the stem, "
          "handlebar and wheel bolts are tight. Every 500 km: check the front brake and "
          "adjust it if the lever travels more than half way. Clean the scooter with a damp "
          "cloth only; never use a pressure washer."),
    ("h2", "Warranty and support"),
    ("p", "Register your S9 in the Zipmo app within 30 days of purchase to activate the "
          "warranty. Zipmo support: 0330 088 4412 (Monday to Friday, 8:30am to 5:30pm) or "
          "support@zipmo.example. Have the serial number ready; it is printed under the "
          "deck, near the rear wheel."),
]

SCHOOL = [
    ("h1", "St Brannock's C of E Primary School, Fernmouth"),
    ("p", "Term dates 2026/27 and uniform policy. Headteacher: Mrs Helen Trebilcock. School "
          "office: 01326 555 230, office@stbrannocks.example."),
    ("h2", "Term dates 2026/27"),
    ("table", ["Term", "Starts", "Half term (school closed)", "Ends"], [
        ["Autumn 2026", "Thursday 3 September 2026", "Monday 26 to Friday 30 October 2026",
         "Friday 18 December 2026"],
        ["Spring 2027", "Monday 4 January 2027", "Monday 15 to Friday 19 February 2027",
         "Thursday 25 March 2027"],
        ["Summer 2027", "Monday 12 April 2027", "Monday 31 May to Friday 4 June 2027",
         "Wednesday 21 July 2027"],
    ]),
    ("p", "INSET (staff training) days, when the school is closed to pupils: Tuesday 1 "
          "September 2026, Wednesday 2 September 2026, Monday 2 November 2026, Monday 22 "
          "February 2027 and Monday 7 June 2027. The school is also closed on the May Day "
          "bank holiday, Monday 3 May 2027."),
    ("h2", "The school day"),
    ("p", "The gates open at 8:40am and registration is at 8:50am. Reception and Key Stage 1 "
          "finish at 3:10pm; Key Stage 2 finishes at 3:15pm. Breakfast club runs from 7:45am "
          "and costs £3.50 a session. After-school club runs until 5:45pm and costs £9 a "
          "session; book both through the Arbor app by 6pm the day before."),
    ("h2", "Uniform policy"),
    ("p", "We ask every child to wear school uniform. It keeps costs down, helps children "
          "feel part of the school and avoids competition over clothes. Please label every "
          "item with your child's name."),
    ("table", ["Item", "Details", "Where to buy"], [
        ["Sweatshirt or cardigan", "bottle green, with school logo",
         "Kernow Schoolwear, Fernmouth (£11.50)"],
        ["Polo shirt", "white, plain or with logo", "any supplier"],
        ["Trousers, skirt or pinafore", "grey", "any supplier"],
        ["Summer dress (optional, summer term)", "green and white gingham", "any supplier"],
        ["Shoes", "black, no trainers, no heels", "any supplier"],
        ["PE kit", "white T-shirt, green shorts, black plimsolls or trainers; navy or green "
         "tracksuit for outdoor PE from October to March", "any supplier"],
        ["Book bag", "green, with logo", "school office (£5.75)"],
        ["Swimming kit (Year 4)", "one-piece costume or fitted trunks (no board shorts), "
         "swimming hat, towel", "any supplier"],
    ]),
    ("p", "Jewellery: only a watch (not a smart watch) and small stud earrings. Earrings must "
          "be taken out for PE and swimming, or covered with tape on the day the ears are "
          "pierced. Long hair must be tied back with plain green, black or white bobbles. No "
          "nail varnish, make-up or temporary tattoos."),
    ("p", "The PTFA holds a pre-loved uniform sale on the first Friday of each half term at "
          "3:15pm in the school hall; every item costs £1. Families who receive free school "
          "meals can ask the office for a £50 uniform voucher once a year."),
    ("h2", "PE and swimming"),
    ("p", "Each class has PE twice a week and children come to school in their PE kit on "
          "those days. Year 4 have swimming lessons at Fernmouth Leisure Pool on Thursday "
          "afternoons during the spring term; the coach leaves at 1pm and returns by 3pm. "
          "The lessons are paid for by the school."),
    ("h2", "Absence and holidays"),
    ("p", "If your child is ill, ring the absence line (01326 555 230, option 1) before 9:30am "
          "on every day of absence, or report it in the Arbor app. Give your child's name, "
          "class and the reason. After sickness or diarrhoea children must stay at home for "
          "48 hours after the last episode. Holidays in term time are not authorised except "
          "in exceptional circumstances; ask the headteacher in writing at least four weeks "
          "before."),
]

POOL: dict[str, list[list[Any]]] = {
    "Timetable": [
        ["Day", "Start", "End", "Session", "Pool"],
        ["Monday", "06:30", "08:30", "Lane swim (adults)", "Main pool"],
        ["Monday", "09:00", "12:00", "Public swim", "Main pool"],
        ["Monday", "12:00", "13:00", "Lunchtime lanes", "Main pool"],
        ["Monday", "16:00", "19:00", "Swimming lessons", "Learner pool"],
        ["Monday", "19:00", "21:00", "Fernmouth Seals swimming club", "Main pool"],
        ["Tuesday", "06:30", "08:30", "Lane swim (adults)", "Main pool"],
        ["Tuesday", "10:00", "10:45", "Aqua fit", "Learner pool"],
        ["Tuesday", "13:00", "15:00", "Over-60s swim", "Main pool"],
        ["Tuesday", "18:00", "20:00", "Public swim", "Main pool"],
        ["Wednesday", "06:30", "08:30", "Lane swim (adults)", "Main pool"],
        ["Wednesday", "09:30", "10:15", "Parent and toddler", "Learner pool"],
        ["Wednesday", "12:00", "13:00", "Lunchtime lanes", "Main pool"],
        ["Wednesday", "16:00", "19:00", "Swimming lessons", "Learner pool"],
        ["Wednesday", "19:30", "21:00", "Adults only swim", "Main pool"],
        ["Thursday", "06:30", "08:30", "Lane swim (adults)", "Main pool"],
        ["Thursday", "09:00", "11:30", "Public swim", "Main pool"],
        ["Thursday", "13:15", "15:00", "Schools (closed to the public)", "Both pools"],
        ["Thursday", "18:00", "18:45", "Aqua fit", "Learner pool"],
        ["Thursday", "19:00", "21:00", "Fernmouth Seals swimming club", "Main pool"],
        ["Friday", "06:30", "08:30", "Lane swim (adults)", "Main pool"],
        ["Friday", "10:00", "12:00", "Public swim", "Main pool"],
        ["Friday", "16:00", "18:00", "Public swim", "Main pool"],
        ["Friday", "18:30", "20:00", "Inflatable fun session (age 8+)", "Main pool"],
        ["Saturday", "08:00", "09:00", "Lane swim (adults)", "Main pool"],
        ["Saturday", "09:00", "12:00", "Swimming lessons", "Learner pool"],
        ["Saturday", "12:30", "16:00", "Public swim", "Main pool"],
        ["Sunday", "08:00", "10:00", "Lane swim (adults)", "Main pool"],
        ["Sunday", "10:00", "13:00", "Family swim", "Both pools"],
        ["Sunday", "13:00", "15:00", "Public swim", "Main pool"],
        ["Fernmouth Leisure Pool, Foundry Lane, Fernmouth. Main pool 25 m, 6 lanes; "
         "learner pool 12 m, 0.9 m deep. Last entry 30 minutes before the end of a session. "
         "The pool is closed for maintenance from 7 to 20 September 2026 and on 25 and 26 "
         "December."],
    ],
    "Prices": [
        ["Ticket", "Price", "Notes"],
        ["Adult swim", "£5.40", "also lane swim and adults only swim"],
        ["Junior swim (3-15)", "£3.20", "under 8s must be with a swimmer aged 16 or over"],
        ["Under 3s", "free", ""],
        ["Concession swim", "£4.10", "over 60s, students, jobseekers"],
        ["Family swim", "£14.50", "2 adults and 2 juniors, or 1 adult and 3 juniors"],
        ["Aqua fit", "£6.90", "book online, 24 places"],
        ["Inflatable fun session", "£4.20", "includes the swim"],
        ["Swimming lesson (30 minutes)", "£7.80", "paid by the term in advance"],
        ["Adult 10-swim card", "£48.00", "valid 12 months"],
        ["Monthly unlimited swimming", "£34.00", "direct debit, 1 month notice to cancel"],
        ["Spectator", "free", ""],
        ["Locker", "20p", "refunded"],
        ["Pool users parking in Foundry Lane car park get 2 hours free: have the car park "
         "ticket stamped at reception."],
    ],
}

TRUST = [
    ("Fern Valley Wildlife Trust - Annual Report 2025",
     ["Year to 31 December 2025", "Presented at the AGM, 18 April 2026",
      "Registered charity no. 1187345"],
     "Good evening and welcome. I'm Dr Anita Polkinghorne, chair of trustees. This report "
     "covers our 31st year; the trust was founded in 1994 by a group of local birdwatchers."),
    ("The year at a glance",
     ["Members: 2,140 (1,905 a year earlier)", "Volunteers: 186",
      "Volunteer hours: 9,870", "Nature reserves managed: 5 sites, 212 hectares"],
     "That is 235 new members, the biggest rise since the trust began. If we valued the "
     "volunteer hours at the real living wage they would be worth about £125,000."),
    ("Where the money came from",
     ["Total income: £612,400", "Membership: £171,200", "Grants: £236,000",
      "Donations and legacies: £118,500", "Visitor centre cafe and shop: £86,700"],
     "The largest grant was £150,000 from the National Lottery Heritage Fund for the "
     "Penrose Marsh restoration, paid over three years. Donations include one legacy of "
     "£60,000 from the late Mrs Joan Rowse."),
    ("How we spent it",
     ["Total spending: £571,900", "Conservation work: £318,000", "Education: £97,400",
      "Visitor centre: £76,800", "Fundraising: £52,300", "Governance: £27,400",
      "Surplus for the year: £40,500"],
     "Presented by the treasurer, Marcus Bray. The accounts were independently examined by "
     "Carew and Lobb and approved by the trustees on 12 March 2026. Free reserves at the "
     "year end were £204,000, about four months of spending."),
    ("Conservation highlights",
     ["Penrose Marsh: 3.2 km of ditches restored", "Otters caught on camera traps at "
      "Penrose Marsh for the first time since 2011", "Carn Woods: 4,500 trees planted",
      "Dormice found in 14 of our 60 nest boxes"],
     "Reed warblers at Penrose Marsh: 38 pairs this year, up from 21 pairs. The tree "
     "planting at Carn Woods was done by 310 volunteers over 9 weekends."),
    ("Education and community",
     ["3,260 schoolchildren from 41 schools visited our reserves",
      "Wild Tots sessions every Wednesday morning",
      "Sensory garden at the visitor centre opened in June"],
     "The sensory garden was planted with 40 'Hidcote' lavender plants and 25 rosemary from "
     "Trelowen Garden Centre. Our reserve warden now gets around the Penrose Marsh tracks on "
     "a Zipmo S9 e-scooter, bought with a £1,200 equipment grant from Fernmouth Rotary; the "
     "reserve is private land, so it can be ridden there legally."),
    ("Challenges",
     ["Bird flu closed the Penrose Marsh hide for 6 weeks in February and March",
      "Visitor centre energy bills up 22%", "Fewer weekday volunteers"],
     "The hide closure cost the cafe an estimated £4,100 in lost sales. We are trying "
     "shorter weekday volunteer sessions, 10am to 1pm, to attract people who work part time."),
    ("Plans for 2026",
     ["Grow membership to 2,500", "Open a new bird hide at Penrose Marsh by October 2026 "
      "(cost £38,000)", "Plant 6,000 more trees at Carn Woods",
      "Recruit a second, part-time education officer (3 days a week)"],
     "From 1 April 2026 the annual membership fee rises from £36 to £39 for a single "
     "member and from £54 to £58 for joint membership; it is the first rise since 2021. "
     "Thank you all for your support."),
]

DOCS: dict[str, tuple[str, Any]] = {
    "zipmo-s9-escooter-manual.pdf": ("pdf", SCOOTER),
    "st-brannocks-primary-2026-27.docx": ("docx", SCHOOL),
    "fernmouth-leisure-pool.xlsx": ("xlsx", POOL),
    "fern-valley-wildlife-trust-report-2025.pptx": ("pptx", TRUST),
}
